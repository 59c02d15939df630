import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Preloaded (`node --import`) into the third stack of `bench:tracing -- --context-floor`, whose
 * tracing is off: one AsyncLocalStorage in use, as the SDK's context manager
 * (AsyncLocalStorageContextManager) has from the first span made active on. On Node 20 that turns on
 * the async hooks of every promise, tick and timer the process makes, whether a span is made or not:
 * what tracing costs before its spans, and so the best ratio any span or exporter setting can reach.
 */
new AsyncLocalStorage<object>().enterWith({});
