/**
 * Clocks of a soak run. Every process stamps events with the machine's monotonic clock; the
 * coordinator measures each worker's offset against its own by ping-pong (so a worker on another
 * clock would still line up), and ZooKeeper's wall-clock transaction times are mapped onto the
 * coordinator's clock through the offset of the wall clock measured at a millisecond boundary.
 */

/** Milliseconds (with a fraction) on the machine's monotonic clock: the soak's time base. */
export function mono(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/**
 * `Date.now() - mono()` measured right at a millisecond boundary of `Date.now()`: a wall-clock
 * time `t` (in whole ms, as ZooKeeper writes it) happened in `[t - offset, t + 1 - offset)` on
 * the monotonic clock. Spins for at most one millisecond.
 *
 * @return The offset in ms.
 */
export function wallClockOffset(): number {
  const start = Date.now();
  let now = Date.now();
  while (now === start) now = Date.now();
  return now - mono();
}

/** One ping-pong with a worker: its clock minus ours, within ± rtt/2. */
export interface OffsetSample {
  /** When the sample was taken, on the coordinator's clock. */
  readonly at: number;
  /** Worker clock minus coordinator clock at that moment. */
  readonly offset: number;
  readonly rtt: number;
}

/**
 * Maps a worker's times onto the coordinator's clock from its ping-pong samples: each time
 * takes the best (lowest round trip) of the samples nearest to it.
 */
export class WorkerClock {
  private readonly samples: OffsetSample[] = [];

  /** Adds a sample (in time order). */
  add(sample: OffsetSample): void {
    this.samples.push(sample);
  }

  get count(): number {
    return this.samples.length;
  }

  /** The sample to use around coordinator time `at`: the lowest rtt among the 5 nearest. */
  private sampleNear(at: number): OffsetSample | undefined {
    const samples = this.samples;
    if (samples.length === 0) return undefined;
    // Samples come in time order: binary search for the first one at or after `at`.
    let low = 0;
    let high = samples.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((samples[middle] as OffsetSample).at < at) low = middle + 1;
      else high = middle;
    }
    let best: OffsetSample | undefined;
    for (let index = Math.max(0, low - 3); index < Math.min(samples.length, low + 2); index++) {
      const sample = samples[index] as OffsetSample;
      if (!best || sample.rtt < best.rtt) best = sample;
    }
    return best;
  }

  /** A worker time on the coordinator's clock (the offset is about 0 on one machine). */
  toCoordinator(workerTime: number): number {
    const sample = this.sampleNear(workerTime);
    return sample ? workerTime - sample.offset : workerTime;
  }

  /** The uncertainty of that mapping: half the round trip of the sample used. */
  uncertainty(workerTime: number): number {
    return (this.sampleNear(workerTime)?.rtt ?? 1) / 2;
  }

  /** The largest |offset| and the lowest rtt seen, for the report. */
  summary(): { maxAbsOffsetMs: number; bestRttMs: number; samples: number } {
    // A sample taken while the worker was stalled says nothing: only those with a short rtt.
    const good = this.samples.filter((sample) => sample.rtt < 5);
    return {
      maxAbsOffsetMs: Math.max(0, ...good.map((sample) => Math.abs(sample.offset))),
      bestRttMs: Math.min(...this.samples.map((sample) => sample.rtt)),
      samples: this.samples.length,
    };
  }
}
