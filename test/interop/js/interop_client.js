#!/usr/bin/env node
// kafkajs client for the Silkworm interop tests.
//
//   produce: reads JSON lines {"key","value","headers":[{"key","value"}]}
//            from stdin and produces them, in order, to --topic; exits
//            non-zero if any send fails.
//   consume: reads every partition of --topic from its start to the end
//            offsets seen at startup, through a fresh consumer group
//            (kafkajs has no groupless consumer), and prints one JSON line
//            per record: {"partition","offset","key","value","headers",
//            "timestamp","timestamp_type"}.
//
// Example against a running broker (after `npm ci` in this directory):
//   echo '{"key":"k-1","value":"v-1","headers":[]}' |
//     node interop_client.js produce --bootstrap 127.0.0.1:9092 --topic t
//   node interop_client.js consume --bootstrap 127.0.0.1:9092 --topic t
'use strict';

const { Kafka, Partitioners, logLevel } = require('kafkajs');

function parseArgs(argv) {
  const args = { mode: argv[0], timeout: 120 };
  for (let i = 1; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, '');
    if (!['bootstrap', 'topic', 'timeout'].includes(name) || i + 1 >= argv.length) {
      throw new Error(`usage: interop_client.js produce|consume --bootstrap host:port --topic t [--timeout seconds]; bad argument ${argv[i]}`);
    }
    args[name] = argv[i + 1];
  }
  if (!['produce', 'consume'].includes(args.mode) || !args.bootstrap || !args.topic) {
    throw new Error('usage: interop_client.js produce|consume --bootstrap host:port --topic t [--timeout seconds]');
  }
  args.timeout = Number(args.timeout);
  return args;
}

// Logs go to stderr: stdout carries only records.
const stderrLogger = () => ({ namespace, level, log }) => {
  const { message, ...extra } = log;
  process.stderr.write(`kafkajs ${level} ${namespace}: ${message} ${JSON.stringify(extra)}\n`);
};

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

async function produce(kafka, args) {
  const input = await readStdin();
  const messages = input.split('\n').filter((l) => l.trim() !== '').map((l) => {
    const r = JSON.parse(l);
    const headers = {};
    for (const h of r.headers) headers[h.key] = h.value;
    return { key: r.key, value: r.value, headers };
  });
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  // Sequential sends keep the produce order within each partition.
  const chunk = 500;
  for (let i = 0; i < messages.length; i += chunk) {
    await producer.send({ topic: args.topic, acks: -1, messages: messages.slice(i, i + chunk) });
  }
  await producer.disconnect();
  process.stderr.write(`produced ${messages.length} records\n`);
}

async function consume(kafka, args) {
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(args.topic);
  await admin.disconnect();
  const ends = new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
  const next = new Map(offsets.map((o) => [o.partition, BigInt(o.low)]));
  const finished = () => [...ends].every(([p, end]) => next.get(p) >= end);

  const lines = [];
  let resolveDone;
  let rejectDone;
  const done = new Promise((resolve, reject) => { resolveDone = resolve; rejectDone = reject; });
  const consumer = kafka.consumer({
    groupId: `silkworm-interop-${process.pid}-${Date.now()}`,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 500,
    // Fail at once rather than restarting the consumer until the timeout.
    retry: { restartOnFailure: async () => false },
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => rejectDone(payload.error));
  await consumer.connect();
  await consumer.subscribe({ topics: [args.topic], fromBeginning: true });
  if (!finished()) {
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          const headers = [];
          for (const [k, v] of Object.entries(m.headers || {})) {
            for (const one of Array.isArray(v) ? v : [v]) {
              headers.push({ key: k, value: one === null || one === undefined ? null : one.toString() });
            }
          }
          lines.push(JSON.stringify({
            partition: batch.partition,
            offset: Number(m.offset),
            key: m.key === null ? null : m.key.toString(),
            value: m.value === null ? null : m.value.toString(),
            headers,
            timestamp: Number(m.timestamp),
            timestamp_type: 0, // kafkajs does not expose the batch's timestamp type
          }));
          next.set(batch.partition, BigInt(m.offset) + 1n);
        }
        if (finished()) resolveDone();
      },
    });
    await done;
  }
  await consumer.disconnect();
  process.stdout.write(lines.length ? lines.join('\n') + '\n' : '');
  process.stderr.write(`consumed ${lines.length} records\n`);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const guard = setTimeout(() => {
    process.stderr.write(`interop_client.js ${args.mode}: timed out after ${args.timeout}s\n`);
    process.exit(1);
  }, args.timeout * 1000);
  const kafka = new Kafka({
    clientId: 'silkworm-interop-kafkajs',
    brokers: [args.bootstrap],
    logLevel: logLevel.WARN,
    logCreator: stderrLogger,
  });
  if (args.mode === 'produce') await produce(kafka, args);
  else await consume(kafka, args);
  clearTimeout(guard);
}

main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (err) => {
    process.stderr.write(`interop_client.js: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
