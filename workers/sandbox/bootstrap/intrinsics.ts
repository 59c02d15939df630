/**
 * The built-ins the bootstrap calls once agent code can run, taken when the bundle is evaluated:
 * before the realm is locked down and before any agent code runs, so nothing an agent does to the
 * globals reaches the bootstrap's own calls.
 */
export const parseJson = JSON.parse;
export const toJson = JSON.stringify;
export const RealDate = Date;
export const RealError = Error;
export const RealTypeError = TypeError;
export const builtinErrors = [TypeError, ReferenceError, SyntaxError, RangeError, URIError, EvalError];
export const isArray = Array.isArray;
export const apply = Reflect.apply;
export const ownKeys = Reflect.ownKeys;
export const regExpExec = RegExp.prototype.exec;
export const RealProxy = Proxy;
export const RealWeakMap = WeakMap;
export const reflectGet = Reflect.get;
export const reflectSet = Reflect.set;
export const reflectHas = Reflect.has;
export const reflectDelete = Reflect.deleteProperty;
export const concat = Array.prototype.concat;
