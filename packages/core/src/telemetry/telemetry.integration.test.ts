/**
 * The client's OpenTelemetry metrics read back through the SDK: each request's duration with
 * OTel's database attributes, and session state changes.
 */
import { type Attributes, metrics } from '@opentelemetry/api';
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectedClient, testRoot } from '../../test/support';

class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const reader = new OnDemandReader();
const provider = new MeterProvider({ readers: [reader] });
beforeAll(() => {
  metrics.setGlobalMeterProvider(provider);
});
afterAll(async () => {
  metrics.disable();
  await provider.shutdown();
});

async function points(name: string): Promise<DataPoint<number | Histogram>[]> {
  const { resourceMetrics } = await reader.collect();
  return resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints as DataPoint<number | Histogram>[]);
}

/** A counter's sum, or a histogram's count, over the points whose attributes include `match`. */
async function total(name: string, match: Attributes): Promise<number> {
  let sum = 0;
  for (const point of await points(name)) {
    if (!Object.entries(match).every(([key, value]) => point.attributes[key] === value)) continue;
    sum += typeof point.value === 'number' ? point.value : point.value.count;
  }
  return sum;
}

const zookeeper = { 'db.system.name': 'zookeeper' };

describe('telemetry', () => {
  it('times each request with db.system.name zookeeper and db.operation.name', async () => {
    const root = await testRoot();
    const client = await connectedClient();
    const ok = (operation: string) =>
      total('db.client.operation.duration', { ...zookeeper, 'db.operation.name': operation });
    const noNode = { ...zookeeper, 'db.operation.name': 'getData', 'error.type': 'NoNode' };
    const before = {
      create: await ok('create'),
      exists: await ok('exists'),
      noNode: await total('db.client.operation.duration', noNode),
    };

    await client.promises.create(`${root}/a`, 'x');
    await expect(client.promises.get(`${root}/missing`)).rejects.toMatchObject({ code: 'NoNode' });
    // exists answering "no node" is an answer, not a failure.
    expect(await client.promises.exists(`${root}/missing`)).toBeNull();

    expect((await ok('create')) - before.create).toBe(1);
    expect((await ok('exists')) - before.exists).toBe(1);
    expect((await total('db.client.operation.duration', noNode)) - before.noNode).toBe(1);
    const all = await points('db.client.operation.duration');
    for (const point of all) {
      expect(point.attributes['db.system.name']).toBe('zookeeper');
      expect(Object.values(point.attributes)).not.toContain(`${root}/a`);
    }
    const failed = all.find((point) => point.attributes['error.type'] === 'NoNode');
    expect(failed?.attributes['db.response.status_code']).toBe('-101');
  });

  it('counts session state changes by state', async () => {
    const connected = { 'zkrx.session.state': 'connected' };
    const closed = { 'zkrx.session.state': 'closed' };
    const before = {
      connected: await total('zkrx.session.state_changes', connected),
      closed: await total('zkrx.session.state_changes', closed),
    };
    const client = await connectedClient();
    expect((await total('zkrx.session.state_changes', connected)) - before.connected).toBe(1);
    await client.close();
    expect((await total('zkrx.session.state_changes', closed)) - before.closed).toBe(1);
  });
});
