/**
 * Registers OpenTelemetry SDKs (metrics collected every 10 s into memory, spans batched into
 * memory) in a bench process, to measure what zkrx's instrumentation costs once an application
 * registers an SDK. Preload it:
 *
 *   node --import ./packages/bench/dist/tools/otel-sdk.js packages/bench/dist/tools/lock-overhead.js <host:port>
 */
import { metrics, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
} from '@opentelemetry/sdk-trace-base';

const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new BatchSpanProcessor(spans)],
});
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const meterProvider = new MeterProvider({
  readers: [
    new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 10_000 }),
  ],
});
trace.setGlobalTracerProvider(tracerProvider);
metrics.setGlobalMeterProvider(meterProvider);

// Keep memory flat over a long run: drop what was exported.
setInterval(() => {
  spans.reset();
  metricExporter.reset();
}, 5_000).unref();
