/**
 * OpenTelemetry read back in tests: an SDK meter provider with a reader collected on demand and
 * a tracer provider exporting to memory, registered globally for one test file.
 */
import { type Attributes, metrics, trace } from '@opentelemetry/api';
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** A reader that exports nothing by itself: `collect()` reads the instruments when asked. */
class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** One metric's data point: a number (counters), or a histogram's count/sum. */
export type Point = DataPoint<number | Histogram>;

export interface TelemetryRecorder {
  /** The data points of the metric `name` now (cumulative since registration). */
  points(name: string): Promise<Point[]>;
  /**
   * The metric's total over the points whose attributes include `match`: a counter's sum, a
   * histogram's count.
   */
  total(name: string, match?: Attributes): Promise<number>;
  /** The spans ended so far named `name`. */
  spans(name: string): ReadableSpan[];
  /** Unregisters the providers (the API is a no-op again). */
  stop(): Promise<void>;
}

function matches(attributes: Attributes, match: Attributes): boolean {
  return Object.entries(match).every(([key, value]) => attributes[key] === value);
}

/** Registers SDK providers globally (stop them in `afterAll`). */
export function recordTelemetry(): TelemetryRecorder {
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  metrics.setGlobalMeterProvider(meterProvider);
  trace.setGlobalTracerProvider(tracerProvider);
  const points = async (name: string): Promise<Point[]> => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === name)
      .flatMap((metric) => metric.dataPoints as Point[]);
  };
  return {
    points,
    async total(name, match = {}) {
      let total = 0;
      for (const point of await points(name)) {
        if (!matches(point.attributes, match)) continue;
        total += typeof point.value === 'number' ? point.value : point.value.count;
      }
      return total;
    },
    spans: (name) => exporter.getFinishedSpans().filter((span) => span.name === name),
    async stop() {
      metrics.disable();
      trace.disable();
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}
