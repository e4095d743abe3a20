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
//   group:   joins consumer group --group on --topic (kafkajs's default
//            round-robin assigner, session timeout --session-timeout-ms)
//            and prints one JSON line per event:
//              {"event":"assigned","partitions":[...]}  after each join
//              {"event":"revoked"}                      when a rebalance begins
//              {"event":"record","partition","offset","key","value"}
//            Each record is printed before its offset is resolved and
//            committed (after every batch). --offset-reset earliest|latest
//            (kafkajs has no "none": it is refused). With --max-records N it
//            commits exactly the first N records printed and exits;
//            otherwise it runs until SIGTERM, then leaves the group.
//
// Security (every mode; these flags may also come before the mode):
//   --ssl-ca file          TLS, trusting the CA certificate(s) in this PEM file
//                          (the broker's host name is checked too)
//   --ssl-cert/--ssl-key   a client certificate and its key (mutual TLS)
//   --sasl-mechanism m     SASL with plain, scram-sha-256 or scram-sha-512,
//   --sasl-username u        as this user
//   --sasl-password p
// consume reads through the group --group when it is given (a group an ACL
// lets the user read), else through a fresh one. --retries n sets how often
// kafkajs retries a failed connection or request (its default is 5).
//
// Example against a running broker (after `npm ci` in this directory):
//   echo '{"key":"k-1","value":"v-1","headers":[]}' |
//     node interop_client.js produce --bootstrap 127.0.0.1:9092 --topic t
//   node interop_client.js consume --bootstrap 127.0.0.1:9092 --topic t
'use strict';

const fs = require('fs');
const { Kafka, Partitioners, logLevel } = require('kafkajs');

function parseArgs(argv) {
  const usage = 'usage: interop_client.js produce|consume|group --bootstrap host:port --topic t [--timeout seconds]'
    + ' [--group g --offset-reset earliest|latest --session-timeout-ms ms --max-records n]'
    + ' [--ssl-ca file [--ssl-cert file --ssl-key file]]'
    + ' [--sasl-mechanism plain|scram-sha-256|scram-sha-512 --sasl-username u --sasl-password p] [--retries n]';
  const args = {
    timeout: 120, 'offset-reset': 'earliest', 'session-timeout-ms': 6000, 'max-records': 0,
  };
  const names = ['bootstrap', 'topic', 'timeout', 'group', 'offset-reset', 'session-timeout-ms', 'max-records',
    'ssl-ca', 'ssl-cert', 'ssl-key', 'sasl-mechanism', 'sasl-username', 'sasl-password', 'retries'];
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) {
      if (args.mode !== undefined) throw new Error(`${usage}; a second mode ${argv[i]}`);
      args.mode = argv[i];
      continue;
    }
    const name = argv[i].replace(/^--/, '');
    if (!names.includes(name) || i + 1 >= argv.length) {
      throw new Error(`${usage}; bad argument ${argv[i]}`);
    }
    args[name] = argv[i + 1];
    i++;
  }
  if (!['produce', 'consume', 'group'].includes(args.mode) || !args.bootstrap || !args.topic
    || (args.mode === 'group' && !args.group)) {
    throw new Error(usage);
  }
  if (!['earliest', 'latest'].includes(args['offset-reset'])) {
    throw new Error(`--offset-reset ${args['offset-reset']}: kafkajs only has earliest (fromBeginning: true) and latest`);
  }
  if (!['plain', 'scram-sha-256', 'scram-sha-512', undefined].includes(args['sasl-mechanism'])) {
    throw new Error(`--sasl-mechanism ${args['sasl-mechanism']}: want plain, scram-sha-256 or scram-sha-512`);
  }
  if (Boolean(args['ssl-cert']) !== Boolean(args['ssl-key'])) {
    throw new Error('--ssl-cert and --ssl-key go together');
  }
  args.timeout = Number(args.timeout);
  args['session-timeout-ms'] = Number(args['session-timeout-ms']);
  args['max-records'] = Number(args['max-records']);
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
    groupId: args.group || `silkworm-interop-${process.pid}-${Date.now()}`,
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

// emit writes one event line; writes to a pipe are synchronous in Node on
// Linux, so a line is out before the offset after it is committed.
function emit(event) {
  process.stdout.write(JSON.stringify(event) + '\n');
}

async function group(kafka, args) {
  const sessionTimeout = args['session-timeout-ms'];
  const maxRecords = args['max-records'];
  const consumer = kafka.consumer({
    groupId: args.group,
    allowAutoTopicCreation: false,
    sessionTimeout,
    heartbeatInterval: Math.max(Math.floor(sessionTimeout / 6), 100),
    rebalanceTimeout: 30000,
    maxWaitTimeInMs: 500,
    retry: { restartOnFailure: async () => false },
  });
  let resolveDone;
  let rejectDone;
  const done = new Promise((resolve, reject) => { resolveDone = resolve; rejectDone = reject; });
  consumer.on(consumer.events.CRASH, ({ payload }) => rejectDone(payload.error));
  consumer.on(consumer.events.REBALANCING, () => emit({ event: 'revoked' }));
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const partitions = [...(payload.memberAssignment[args.topic] || [])].sort((a, b) => a - b);
    emit({ event: 'assigned', partitions });
  });
  process.on('SIGTERM', () => resolveDone());
  await consumer.connect();
  await consumer.subscribe({ topics: [args.topic], fromBeginning: args['offset-reset'] === 'earliest' });
  let printed = 0;
  await consumer.run({
    autoCommit: true,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, isRunning }) => {
      for (const m of batch.messages) {
        if ((maxRecords && printed >= maxRecords) || !isRunning()) break;
        emit({
          event: 'record',
          partition: batch.partition,
          offset: Number(m.offset),
          key: m.key === null ? null : m.key.toString(),
          value: m.value === null ? null : m.value.toString(),
        });
        printed++;
        resolveOffset(m.offset);
      }
      await commitOffsetsIfNecessary();
      if (maxRecords && printed >= maxRecords) resolveDone();
    },
  });
  await done;
  await consumer.disconnect();
  process.stderr.write(`printed ${printed} records\n`);
}

// securityConfig is the ssl and sasl part of the Kafka client config; empty
// for a plaintext connection.
function securityConfig(args) {
  const config = {};
  if (args['ssl-ca']) {
    config.ssl = { ca: [fs.readFileSync(args['ssl-ca'], 'utf8')] };
    if (args['ssl-cert']) {
      config.ssl.cert = fs.readFileSync(args['ssl-cert'], 'utf8');
      config.ssl.key = fs.readFileSync(args['ssl-key'], 'utf8');
    }
  }
  if (args['sasl-mechanism']) {
    config.sasl = {
      mechanism: args['sasl-mechanism'],
      username: args['sasl-username'] || '',
      password: args['sasl-password'] || '',
    };
  }
  return config;
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
    ...securityConfig(args),
    ...(args.retries === undefined ? {} : { retry: { retries: Number(args.retries) } }),
  });
  if (args.mode === 'produce') await produce(kafka, args);
  else if (args.mode === 'group') await group(kafka, args);
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
