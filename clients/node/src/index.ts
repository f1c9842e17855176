export { connectionOf, keySlot, FOREVER } from './adapter';
export type { Arg, Connection, WaitOptions } from './adapter';
export * from './errors';
export { Lock } from './lock';
export type { LockOptions, AcquireOptions } from './lock';
export type { HoldOptions } from './held';
export { IdGenerator, HashIdGenerator, MAX_ID } from './idgen';
export type { IdBlock } from './idgen';
