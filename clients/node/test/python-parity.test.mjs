// The Node package at the Python package's level: every public class of `redis_recipes` (its `__all__`) and every
// public method of those classes, read from the Python package itself, has a Node export of the same name and a
// method of the camelCase name (`is_exists` → `isExists`), but for the few in NOT_IN_NODE, each with its reason.
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as node from '../dist/index.js';

const pythonSrc = fileURLToPath(new URL('../../python/src', import.meta.url));

/**
 * What has no Node counterpart of the same name. A value names the Node export (`Class` or `Class.method`) that
 * stands for it, which must exist, or is null when there is nothing to export; `why` says why.
 */
const NOT_IN_NODE = {
  Decision: { node: null, why: 'a NamedTuple in Python; in Node a Decision is a plain object (an interface)' },
  RwLockInfo: { node: null, why: 'a NamedTuple in Python; in Node a plain object (an interface)' },
  Lease: { node: 'PoolLease', why: "Python's pool lease (`with pool.lease()`); Node's `Lease` is the base of the leases" },
  'ResourcePool.lease': { node: 'ResourcePool.hold', why: 'a context manager in Python; `await using … = await pool.hold()` in Node' },
};

// Every class of __all__ with the public methods, properties and NamedTuple fields it defines or inherits from the
// package's own classes (not from object, tuple, Exception or redis-py).
const INTROSPECT = `
import inspect, json, redis_recipes
classes = {}
for name in redis_recipes.__all__:
    obj = getattr(redis_recipes, name)
    methods = set()
    for klass in (obj.__mro__ if inspect.isclass(obj) else ()):
        if not getattr(klass, "__module__", "").startswith("redis_recipes"):
            continue
        for attr, value in vars(klass).items():
            if not attr.startswith("_") and (callable(value) or isinstance(value, (property, staticmethod, classmethod))):
                methods.add(attr)
    classes[name] = {"isclass": inspect.isclass(obj), "methods": sorted(methods)}
print(json.dumps(classes))
`;

function python() {
  const result = spawnSync('python3', ['-c', INTROSPECT], {
    encoding: 'utf8', env: { ...process.env, PYTHONPATH: pythonSrc },
  });
  if (result.error || result.status !== 0) {
    return { skip: `python3 with redis-py could not list redis_recipes: ${result.error?.message ?? result.stderr.trim()}` };
  }
  return { classes: JSON.parse(result.stdout) };
}

const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

function hasMember(cls, name) {
  for (let proto = cls.prototype; proto; proto = Object.getPrototypeOf(proto)) {
    if (Object.getOwnPropertyDescriptor(proto, name)) return true;
  }
  return Object.getOwnPropertyDescriptor(cls, name) !== undefined;
}

/** The Node export `Class` or method `Class.method` named by `path`, or a reason why not. */
function missing(path) {
  const [className, method] = path.split('.');
  const cls = node[className];
  if (typeof cls !== 'function') return `no class ${className}`;
  if (method !== undefined && !hasMember(cls, method)) return `no method ${className}.${method}`;
  return null;
}

const found = python();
const skip = found.skip && process.env.RECIPES_REQUIRE_SERVERS !== '1' ? found.skip : false;

it('every public class and method of the Python package is in the Node package', { skip }, () => {
  assert.equal(found.skip, undefined, found.skip);
  const lacks = [];
  const used = new Set();
  for (const [name, { isclass, methods }] of Object.entries(found.classes)) {
    assert.ok(isclass, `${name} of __all__ is not a class: list what it maps to`);
    const exception = NOT_IN_NODE[name];
    if (exception) {
      used.add(name);
      if (exception.node !== null && missing(exception.node)) lacks.push(`${name} → ${missing(exception.node)}`);
      continue;
    }
    if (missing(name)) {
      lacks.push(missing(name));
      continue;
    }
    for (const method of methods) {
      const path = `${name}.${method}`;
      if (NOT_IN_NODE[path]) {
        used.add(path);
        const stand = NOT_IN_NODE[path].node;
        if (stand !== null && missing(stand)) lacks.push(`${path} → ${missing(stand)}`);
      } else if (missing(`${name}.${camel(method)}`)) {
        lacks.push(`${missing(`${name}.${camel(method)}`)} (Python's ${path})`);
      }
    }
  }
  assert.deepEqual(lacks, [], 'the Node package lacks these');
  assert.deepEqual(Object.keys(NOT_IN_NODE).filter((path) => !used.has(path)), [],
    'NOT_IN_NODE names what Python no longer has');
  assert.ok(Object.keys(found.classes).length >= 40, Object.keys(found.classes).join());
});
