// Channel occupancy in memory, for a node alone: this node's first subscriber of a channel is the first anywhere.
// Answers at once.
import type { OccupancyTracker } from './occupancy.js';

export function memoryOccupancy(): OccupancyTracker {
  const occupied = new Set<string>();
  return {
    occupy(channel) {
      if (occupied.has(channel)) return false;
      occupied.add(channel);
      return true;
    },
    vacate: (channel) => occupied.delete(channel),
    sweep: () => [],
    // The node's sockets are closed before it withdraws: every channel was vacated by then.
    withdraw: () => [],
  };
}
