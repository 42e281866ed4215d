// One clock for every benchmark process: CLOCK_MONOTONIC in milliseconds, shared by all processes of the
// machine, so a send time written by the driver can be subtracted from an arrival time in a worker.
export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;
