// A bounded Map for per-node caches.

/** A Map with a bound: reading an entry makes it the most recent; past the capacity, the least recent goes. */
export class LruCache<K, V> {
  readonly #map = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.capacity) this.#map.delete(this.#map.keys().next().value as K);
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }
}
