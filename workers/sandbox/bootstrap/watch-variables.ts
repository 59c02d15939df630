import { callSite } from './call-site.js';
import { callSync, type Run } from './host.js';
import { apply, concat, isArray, RealProxy, RealWeakMap, reflectDelete, reflectGet, reflectHas, reflectSet, toJson } from './intrinsics.js';

export type VariableScope = 'vars' | 'conv';

// Reports one change of sys.vars or sys.conv. A value JSON cannot hold is reported by a placeholder.
function traceVar(run: Run, scope: VariableScope, path: string[], op: 'set' | 'delete', value?: unknown): void {
  const change: Record<string, unknown> = { scope, path, op, site: callSite() };
  if (op === 'set') change.value = value === undefined ? null : value;
  try {
    toJson(change);
  } catch {
    change.value = '[not JSON]';
  }
  callSync(run, 'trace', change);
}

/**
 * sys.vars or sys.conv of a traced run, as a property's get and set: proxies that report every set
 * and delete, at any depth, with the path from the top. Values stored are the plain objects, never
 * the proxies.
 */
export function watchVariables(run: Run, scope: VariableScope, root: unknown): { get(): unknown; set(value: unknown): void } {
  const proxies = new RealWeakMap<object, object>();
  const targets = new RealWeakMap<object, object>();
  const childPath = (path: string[], key: string): string[] => apply(concat, path, [key]);
  function watch(target: unknown, path: string[]): unknown {
    if (target === null || typeof target !== 'object') return target;
    const known = proxies.get(target);
    if (known) return known;
    const proxy = new RealProxy(target, {
      get(t, key) {
        const value: unknown = reflectGet(t, key);
        return typeof key === 'string' ? watch(value, childPath(path, key)) : value;
      },
      set(t, key, value: unknown) {
        const plain = value !== null && typeof value === 'object' && targets.has(value) ? targets.get(value) : value;
        const done = reflectSet(t, key, plain);
        // An array's length follows from the element changes already reported (push, splice).
        if (done && typeof key === 'string' && !(key === 'length' && isArray(t))) traceVar(run, scope, childPath(path, key), 'set', plain);
        return done;
      },
      deleteProperty(t, key) {
        const had = reflectHas(t, key);
        const done = reflectDelete(t, key);
        if (done && had && typeof key === 'string') traceVar(run, scope, childPath(path, key), 'delete');
        return done;
      },
    });
    proxies.set(target, proxy);
    targets.set(proxy, target);
    return proxy;
  }
  let top = watch(root, []);
  return {
    get() {
      return top;
    },
    set(value) {
      traceVar(run, scope, [], 'set', value);
      top = watch(value, []);
    },
  };
}
