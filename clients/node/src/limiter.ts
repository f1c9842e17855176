/** RATE: the book's fixed-window `Limiter` (second edition, chapter 8), on `RATE.FIXED`. */
import { Connection, connectionOf } from './adapter';
import { send } from './held';
import { ms } from './reply';

/**
 * At most `maximum` actions from the first one until `timeout` ms after it, counted at `key` as the book counts
 * them (a string counter that expires), so a key the book's code wrote is read and counted on. `isValid` is one
 * `RATE.FIXED key <timeout>`: the book's `INCR` and `EXPIRE … NX` in one atomic command. `remainingTime` answers
 * what the book's does despite its name: how many more actions the open window allows (0 when over), or null when
 * no window is open (the key is missing).
 */
export class Limiter {
  private readonly connection: Connection;

  constructor(client: unknown, readonly key: string, readonly timeout: number, readonly maximum: number) {
    this.connection = connectionOf(client);
  }

  /** The book's: counts an action (opening a window of `timeout` ms if none is open); true when within `maximum`. */
  async isValid(): Promise<boolean> {
    const counted = (await send(this.connection, ['RATE.FIXED', this.key, ms(this.timeout, 'a timeout')])) as unknown[];
    return Number(counted[0]) <= this.maximum;
  }

  /** The book's: the actions left in the open window (0 when over the maximum), or null when no window is open. */
  async remainingTime(): Promise<number | null> {
    const count = await send(this.connection, ['GET', this.key]);
    if (count === null || count === undefined) return null;
    return Math.max(0, this.maximum - Number(count));
  }
}
