// cluster-key-slot (the slot calculation ioredis itself uses) ships no types.
declare module 'cluster-key-slot' {
  /** The Redis Cluster slot (0-16383) of a key, honouring a `{hash tag}`. */
  export default function calculateSlot(key: string): number;
}
