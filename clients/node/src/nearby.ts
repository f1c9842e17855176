/**
 * NEARBY: the book's nearby users (chapter 25) on a plain geo key, its random neighbour drawn by the module's
 * `NEARBY.RANDOM`: uniformly among every user within the radius, not among the nine nearest.
 */
import { Arg, Connection, connectionOf } from './adapter';
import { send } from './held';
import { text } from './reply';

/** `search`'s default `limit` (the book's constant). */
export const MAX_SEARCH_SIZE = 10;
/** How far a random neighbour may be, in kilometres (the book's 1 km). */
export const NEIGHBOUR_RADIUS_KM = 1;

/**
 * Users' positions in the geo key `key` (what `GEOADD` writes, which every geo command reads). `pin`, `locate`,
 * `distance`, `size` and `search` are the book's geo commands; `randomNeighbour` and `cachedRandomNeighbour` draw
 * uniformly among every other user within 1 km, in one read, and reject with `NoPosition` for a user without a
 * position.
 */
export class Location {
  protected readonly connection: Connection;

  constructor(client: unknown, readonly key: string) {
    this.connection = connectionOf(client);
  }

  /** Records (or moves) `user` at longitude `long`, latitude `lati`. */
  async pin(user: Arg, long: number, lati: number): Promise<void> {
    await send(this.connection, ['GEOADD', this.key, long, lati, user]);
  }

  /** `[longitude, latitude]` of `user`, or null when it has none. */
  async locate(user: Arg): Promise<[number, number] | null> {
    const reply = (await send(this.connection, ['GEOPOS', this.key, user])) as unknown[];
    const position = reply?.[0] as unknown[] | null;
    if (!Array.isArray(position)) return null;
    return [Number(text(position[0])), Number(text(position[1]))];
  }

  /** The distance between two users in kilometres, or null when one has no position. */
  async distance(userX: Arg, userY: Arg): Promise<number | null> {
    const reply = text(await send(this.connection, ['GEODIST', this.key, userX, userY, 'km']));
    return reply === null ? null : Number(reply);
  }

  /** How many users have a position. */
  async size(): Promise<number> {
    return Number(await send(this.connection, ['ZCARD', this.key]));
  }

  /**
   * Other users within `radius` km of `user`: as the book's, the `limit` nearest of a search that counts `user`
   * itself (so at most `limit - 1` others), nearest first.
   */
  async search(user: Arg, radius: number, limit = MAX_SEARCH_SIZE): Promise<string[]> {
    const found = (await send(this.connection, [
      'GEOSEARCH', this.key, 'FROMMEMBER', user, 'BYRADIUS', radius, 'km', 'COUNT', limit, 'ASC',
    ])) as unknown[];
    const name = text(user as unknown);
    return found.map((other) => text(other) as string).filter((other) => other !== name);
  }

  /**
   * Another user within 1 km of `user`, drawn uniformly among all of them, or null when nobody is near. `limit`,
   * the book's bound on the users it drew among, is taken and has no effect: the draw covers every user within 1 km.
   */
  async randomNeighbour(user: Arg, limit = MAX_SEARCH_SIZE): Promise<string | null> {
    return text(await send(this.connection, [
      'NEARBY.RANDOM', this.key, 'FROMMEMBER', user, 'BYRADIUS', NEIGHBOUR_RADIUS_KM, 'km',
    ]));
  }

  /**
   * The book's cached `random_neighbour`, which drew among a copy of the search kept for a minute: here the same
   * draw as `randomNeighbour`, over the key itself, so never stale and with no second key.
   */
  async cachedRandomNeighbour(user: Arg, limit = MAX_SEARCH_SIZE): Promise<string | null> {
    return this.randomNeighbour(user, limit);
  }
}
