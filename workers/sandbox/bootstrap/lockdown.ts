import { builtinErrors, ownKeys, RealTypeError } from './intrinsics.js';

/**
 * The lockdown (DESIGN §12: nothing of one run is visible to a later run). Every object reachable
 * from the global object, and the intrinsics reachable only through syntax, is frozen, the global
 * object included, so no run can add a global, add a property to a built-in or replace one. What
 * could outlive a run without a host call (WebAssembly's off-heap memory and background compiles,
 * FinalizationRegistry callbacks, Atomics.waitAsync) is removed.
 */
export function lockDown(): void {
  delete (globalThis as { WebAssembly?: unknown }).WebAssembly;
  delete (globalThis as { FinalizationRegistry?: unknown }).FinalizationRegistry;
  if (typeof Atomics === 'object') delete (Atomics as { waitAsync?: unknown }).waitAsync;
  allowOverrides();
  const objects = reachableFrom([globalThis, ...syntaxIntrinsics()]);
  for (const object of objects) Object.freeze(object);
}

/** Structured stack traces hand out the receivers of frames; keep agents from installing a hook. */
export function sealStackTraceHook(): void {
  Object.defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false, configurable: false });
}

// Intrinsics reached only through syntax are added to what the global object reaches.
function syntaxIntrinsics(): unknown[] {
  const protoOf = Object.getPrototypeOf;
  const roots: unknown[] = [
    protoOf(async function () {}),
    protoOf(function* () {}),
    protoOf(async function* () {}),
    protoOf([][Symbol.iterator]()),
    protoOf(new Map()[Symbol.iterator]()),
    protoOf(new Set()[Symbol.iterator]()),
    protoOf(''[Symbol.iterator]()),
    protoOf(/(?:)/[Symbol.matchAll]('')),
    protoOf(protoOf([][Symbol.iterator]())),
    (function () {
      'use strict';
      return Object.getOwnPropertyDescriptor(arguments, 'callee')!.get;
    })(),
  ];
  if (typeof Intl === 'object' && typeof Intl.Segmenter === 'function') {
    const segments = new Intl.Segmenter().segment('');
    roots.push(protoOf(segments), protoOf(segments[Symbol.iterator]()));
  }
  return roots;
}

// Every object reachable from the roots through own properties (values, getters, setters) and
// prototypes, without recursion. It runs once per context, cold, so it reads as little as it can: a
// built-in function's length and name are never objects.
function reachableFrom(roots: unknown[]): Set<unknown> {
  const seen = new Set<unknown>();
  const pending = roots.slice();
  const descriptorOf = Reflect.getOwnPropertyDescriptor;
  const isObject = (v: unknown): v is object => v !== null && (typeof v === 'object' || typeof v === 'function') && !seen.has(v);
  while (pending.length) {
    const value = pending.pop() as object;
    if (seen.has(value)) continue;
    seen.add(value);
    const proto: unknown = Object.getPrototypeOf(value);
    if (isObject(proto)) pending.push(proto);
    const keys = ownKeys(value);
    const isFunction = typeof value === 'function';
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (isFunction && (key === 'length' || key === 'name')) continue;
      const desc = descriptorOf(value, key)!;
      if ('value' in desc) {
        if (isObject(desc.value)) pending.push(desc.value);
      } else {
        if (isObject(desc.get)) pending.push(desc.get);
        if (isObject(desc.set)) pending.push(desc.set);
      }
    }
  }
  return seen;
}

// Frozen prototypes make an assignment that would shadow an inherited property fail (the "override
// mistake"): 'this.name = ...' in an Error subclass, 'Foo.prototype = {...}; Foo.prototype.constructor
// = Foo'. Those become accessors whose setter defines the property on the object assigned to, as
// SES's moderate taming does. Array and Promise prototypes are left alone: an accessor 'constructor'
// there would switch off V8's fast paths for every map, slice and await.
function overridablePlaces(): [object, string[]][] {
  const errorKeys = ['constructor', 'name', 'message', 'toString'];
  const places: [object, string[]][] = [
    [Object.prototype, ['constructor', 'toString', 'valueOf', 'toLocaleString', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable']],
    [Function.prototype, ['toString']],
    [Error.prototype, errorKeys],
  ];
  for (let i = 0; i < builtinErrors.length; i++) places.push([builtinErrors[i]!.prototype, errorKeys]);
  return places;
}

function allowOverrides(): void {
  for (const [object, keys] of overridablePlaces()) {
    for (const key of keys) {
      const desc = Reflect.getOwnPropertyDescriptor(object, key);
      if (!desc || !('value' in desc)) continue;
      const value: unknown = desc.value;
      // Methods, not function expressions: a method has no `prototype` object, which the lockdown would
      // otherwise make for each of these ~100 functions as it reads them, and freeze (~45 KB a context).
      const accessors = {
        get() {
          return value;
        },
        set(this: object, replacement: unknown) {
          if (this === object) throw new RealTypeError('Cannot assign to read only property ' + key + ' of a built-in');
          Object.defineProperty(this, key, { value: replacement, writable: true, enumerable: true, configurable: true });
        },
      };
      Object.defineProperty(object, key, { get: accessors.get, set: accessors.set, enumerable: desc.enumerable, configurable: false });
    }
  }
}
