// A wire-level stand-in for one Azure Service Bus namespace, for tests only (never deployed).
//
// It lets the real azure-servicebus SDK talk to the app's adapters over the real protocols:
//   - AMQP 1.0 (plain, the Service Bus emulator's mode) on 127.0.0.1: SASL ANONYMOUS, the
//     $cbs put-token handshake (JWT from a token credential, or a SAS token from a
//     connection string), send with message ids and duplicate detection, receive in
//     peek-lock with lock tokens as delivery tags, and settlement on the receive link:
//     complete (accepted), abandon (modified), dead-letter (rejected with
//     com.microsoft:dead-letter, reason and description); lost locks answer
//     com.microsoft:message-lock-lost; the dead-letter subqueue is <queue>/$DeadLetterQueue.
//   - HTTPS (the administration API's ATOM feed): GET /<queue> returns the queue description
//     with its CountDetails, as ServiceBusAdministrationClient.get_queue_runtime_properties
//     reads it; a bearer token without the Manage right gets 401, as Service Bus answers.
// What it cannot do is listed in tests/wire/test_wire_protocol.py.
//
// Usage: node broker.js '<json config>'   (config: {certFile, keyFile, tokens, sasKeys})
//   tokens: {"<bearer token>": ["Manage", "Listen", "Send"], ...} (token credentials);
//   sasKeys: {"<key name>": {"key": "...", "rights": [...]}} (connection strings).
// Prints one line {"amqpPort": n, "httpsPort": n} when both listeners are ready.
// Test control, HTTPS only, under /$test/: POST queues (JSON {name, lockDurationMs,
// maxDeliveryCount, requiresDuplicateDetection}), POST expire-locks/<queue>.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const https = require('https');
const rhea = require('rhea');

const config = JSON.parse(process.argv[2]);
const tokens = config.tokens || {};
const queues = new Map();
let sequence = 0;

const DEAD_LETTER = '$deadletterqueue';
const MAX_MESSAGE_SIZE = 262144;  // 256 KB, the Standard tier's limit
const BATCH_FORMAT = 0x80013700;  // a batch: each data section holds one encoded message
const DUPLICATE_WINDOW_MS = 10 * 60 * 1000;

function createQueue(spec) {
  queues.set(spec.name, {
    name: spec.name,
    lockDurationMs: spec.lockDurationMs || 30000,
    maxDeliveryCount: spec.maxDeliveryCount || 10,
    requiresDuplicateDetection: spec.requiresDuplicateDetection !== false,
    active: [],          // entries available or locked, in sequence order
    deadLetters: [],     // entries in the dead-letter subqueue
    seenIds: new Map(),  // message id -> time first accepted (duplicate detection)
  });
}

// ---------------------------------------------------------------- entity addresses
function entityOf(address) {
  // amqp://host:port/queue[/$DeadLetterQueue], sb://..., or a bare path
  if (!address) return null;
  let path = String(address).replace(/^[a-z]+:\/\/[^/]*/i, '');
  path = path.replace(/^\/+/, '');
  const parts = path.split('/');
  const sub = parts.length > 1 && parts[1].toLowerCase() === DEAD_LETTER;
  return { queue: parts[0], deadLetter: sub };
}

// ---------------------------------------------------------------- delivery
function now() { return Date.now(); }

// An AMQP error as Service Bus sends it: with an info map (its tracking id), which the
// Python SDK reads as the error's third field.
function sbError(condition, description) {
  return { condition, description, info: { 'com.microsoft:tracking-id': 'stand-in' } };
}

function expireLocks(queue, force) {
  const t = now();
  for (const entry of queue.active.slice()) {
    if (entry.lockToken && (force || entry.lockedUntil <= t)) {
      unlock(queue, entry, true);
    }
  }
}

function unlock(queue, entry, countsAsDelivery) {
  entry.lockToken = null;
  entry.lockedUntil = 0;
  if (countsAsDelivery && entry.deliveries >= queue.maxDeliveryCount) {
    deadLetter(queue, entry, 'MaxDeliveryCountExceeded',
      `Message could not be consumed after ${queue.maxDeliveryCount} delivery attempts.`);
  }
}

function deadLetter(queue, entry, reason, description) {
  queue.active.splice(queue.active.indexOf(entry), 1);
  const props = Object.assign({}, entry.message.application_properties || {});
  if (reason !== undefined && reason !== null) props.DeadLetterReason = reason;
  if (description !== undefined && description !== null) {
    props.DeadLetterErrorDescription = description;
  }
  entry.message.application_properties = props;
  entry.lockToken = null;
  queue.deadLetters.push(entry);
}

function available(queue, deadLetterView) {
  if (deadLetterView) return queue.deadLetters.filter((e) => !e.lockToken);
  const t = now();
  return queue.active.filter((e) => !e.lockToken && e.availableAt <= t);
}

function deliver(sender) {
  const link = sender.entity;
  if (!link || !sender.is_open()) return;
  const queue = queues.get(link.queue);
  if (!queue) return;
  expireLocks(queue, false);
  const candidates = available(queue, link.deadLetter);
  while (sender.sendable() && candidates.length) {
    const entry = candidates.shift();
    const lockToken = crypto.randomBytes(16);
    const message = Object.assign({}, entry.message);
    message.delivery_count = entry.deliveries;  // prior deliveries (AMQP header semantics)
    const annotations = Object.assign({}, entry.message.message_annotations || {});
    annotations['x-opt-sequence-number'] = rhea.types.wrap_long(entry.sequence);
    annotations['x-opt-enqueued-time'] = new Date(entry.enqueuedAt);
    if (link.peekLock) {
      entry.lockToken = lockToken;
      entry.lockedUntil = now() + queue.lockDurationMs;
      annotations['x-opt-locked-until'] = new Date(entry.lockedUntil);
    }
    message.message_annotations = annotations;
    entry.deliveries += 1;
    const delivery = sender.send(message, lockToken);
    if (link.peekLock) {
      delivery.entry = entry;
      delivery.lockToken = lockToken;
    } else {
      const list = link.deadLetter ? queue.deadLetters : queue.active;
      list.splice(list.indexOf(entry), 1);
    }
  }
}

function deliverAll(queueName) {
  for (const sender of consumers) {
    if (sender.entity && sender.entity.queue === queueName) deliver(sender);
  }
}

const consumers = new Set();

function settle(context, outcome) {
  const delivery = context.delivery;
  const entry = delivery.entry;
  const sender = context.sender;
  const queue = queues.get(sender.entity.queue);
  const lockHeld = entry && entry.lockToken && entry.lockToken.equals(delivery.lockToken)
    && entry.lockedUntil > now();
  if (!lockHeld) {
    delivery.update(true, rhea.message.rejected({ error: sbError(
      'com.microsoft:message-lock-lost',
      'The lock supplied is invalid. Either the lock expired, or the message has already '
        + 'been removed from the queue.') }).described());
    return;
  }
  const list = sender.entity.deadLetter ? queue.deadLetters : queue.active;
  if (outcome === 'accepted') {
    list.splice(list.indexOf(entry), 1);
    entry.lockToken = null;
    delivery.update(true, rhea.message.accepted().described());
  } else if (outcome === 'modified') {
    const state = delivery.remote_state || {};
    if (state.undeliverable_here) {  // defer: not implemented by this stand-in
      delivery.update(true, rhea.message.rejected({ error: sbError(
        'amqp:not-implemented', 'defer is not supported by the stand-in') }).described());
      return;
    }
    if (sender.entity.deadLetter) entry.lockToken = null;
    else unlock(queue, entry, true);
    delivery.update(true, rhea.message.modified({ delivery_failed: true }).described());
    deliverAll(queue.name);
  } else if (outcome === 'rejected') {
    const error = (delivery.remote_state && delivery.remote_state.error) || {};
    if (error.condition !== 'com.microsoft:dead-letter' || sender.entity.deadLetter) {
      delivery.update(true, rhea.message.rejected({ error: sbError(
        'amqp:not-implemented', `reject with ${error.condition}`) }).described());
      return;
    }
    const info = error.info || {};
    deadLetter(queue, entry, info.DeadLetterReason, info.DeadLetterErrorDescription);
    delivery.update(true, rhea.message.rejected().described());
  } else {  // released
    entry.lockToken = null;
    entry.lockedUntil = 0;
    delivery.update(true, rhea.message.released().described());
    deliverAll(queue.name);
  }
}

// ---------------------------------------------------------------- AMQP
// Abandon (modified) must reach its own handler, not be folded into released.
// Incoming messages are settled explicitly (accepted, or rejected when too large).
const container = rhea.create_container({
  id: 'servicebus-wire-stand-in', treat_modified_as_released: false, autoaccept: false,
});
container.sasl_server_mechanisms.enable_anonymous();

function authorized(connection, right) {
  const rights = connection.rights || new Set();
  return rights.has(right);
}

// Refuse an attach as Service Bus does: answer with a null terminus, then detach with
// the error (the peer raises the error's condition).
function refuse(link, condition, description) {
  if (link.is_receiver()) link.local.attach.target = null;
  else link.local.attach.source = null;
  link.close(sbError(condition, description));
}

container.on('receiver_open', (context) => {  // the peer sends to us
  const receiver = context.receiver;
  const target = receiver.remote.attach.target || {};
  receiver.set_target(target);
  receiver.set_source(receiver.remote.attach.source || {});
  receiver.local.attach.max_message_size = MAX_MESSAGE_SIZE;
  if (target.address === '$cbs') { receiver.cbs = true; return; }
  const entity = entityOf(target.address);
  if (!entity || !queues.has(entity.queue)) {
    refuse(receiver, 'amqp:not-found', `The messaging entity '${target.address}' could not be found.`);
    return;
  }
  if (entity.deadLetter) {
    refuse(receiver, 'amqp:not-allowed', 'Cannot send to a dead-letter subqueue.');
    return;
  }
  if (!authorized(context.connection, 'Send')) {
    refuse(receiver, 'amqp:unauthorized-access', 'Unauthorized access. \'Send\' claim(s) are required to perform this operation.');
    return;
  }
  receiver.entity = entity;
});

container.on('sender_open', (context) => {  // the peer receives from us
  const sender = context.sender;
  const source = sender.remote.attach.source || {};
  sender.set_source(source);
  sender.set_target(sender.remote.attach.target || {});
  sender.local.attach.snd_settle_mode = sender.remote.attach.snd_settle_mode;
  sender.local.attach.rcv_settle_mode = sender.remote.attach.rcv_settle_mode;
  if (source.address === '$cbs') { sender.cbs = true; return; }
  const entity = entityOf(source.address);
  if (!entity || !queues.has(entity.queue)) {
    refuse(sender, 'amqp:not-found', `The messaging entity '${source.address}' could not be found.`);
    return;
  }
  if (!authorized(context.connection, 'Listen')) {
    refuse(sender, 'amqp:unauthorized-access', 'Unauthorized access. \'Listen\' claim(s) are required to perform this operation.');
    return;
  }
  entity.peekLock = sender.remote.attach.snd_settle_mode !== 1;  // receive-and-delete: settled
  sender.entity = entity;
  consumers.add(sender);
});

container.on('sendable', (context) => { if (context.sender.entity) deliver(context.sender); });
container.on('sender_draining', (context) => {
  if (context.sender.entity) deliver(context.sender);
  context.sender.set_drained(true);
});
container.on('sender_close', (context) => consumers.delete(context.sender));
container.on('connection_close', (context) => {
  for (const sender of Array.from(consumers)) {
    if (sender.connection === context.connection) consumers.delete(sender);
  }
});
container.on('disconnected', (context) => {
  for (const sender of Array.from(consumers)) {
    if (sender.connection === context.connection) consumers.delete(sender);
  }
  // Locks of a vanished receiver stay until they expire, as in Service Bus.
});

container.on('accepted', (context) => { if (context.sender.entity) settle(context, 'accepted'); });
container.on('released', (context) => { if (context.sender.entity) settle(context, 'released'); });
container.on('modified', (context) => { if (context.sender.entity) settle(context, 'modified'); });
container.on('rejected', (context) => { if (context.sender.entity) settle(context, 'rejected'); });

// A SAS token (connection string credential): check its HMAC-SHA256 signature with the
// configured key of its key name, as Service Bus does; rights are that key's.
function sasRights(token) {
  const fields = {};
  for (const part of token.slice('SharedAccessSignature '.length).split('&')) {
    const at = part.indexOf('=');
    fields[part.slice(0, at)] = decodeURIComponent(part.slice(at + 1));
  }
  const key = (config.sasKeys || {})[fields.skn];
  if (!key || !fields.sr || !fields.se || !fields.sig) return null;
  if (Number(fields.se) * 1000 <= now()) return null;
  const expected = crypto.createHmac('sha256', key.key)
    .update(`${encodeURIComponent(fields.sr)}\n${fields.se}`).digest('base64');
  return expected === fields.sig ? key.rights : null;
}

function putToken(context, request) {
  const token = typeof request.body === 'string' ? request.body : String(request.body);
  let rights = null;
  if (token.startsWith('SharedAccessSignature ')) {
    rights = sasRights(token);
  } else if (Object.prototype.hasOwnProperty.call(tokens, token)) {
    rights = tokens[token];
  }
  const connection = context.connection;
  if (rights) {
    connection.rights = new Set([...(connection.rights || []), ...rights]);
  }
  const reply = {
    correlation_id: request.message_id,
    application_properties: rights
      ? { 'status-code': 202, 'status-description': 'Accepted' }
      : { 'status-code': 401, 'status-description': 'InvalidSignature: The token is not valid.' },
  };
  const session = context.receiver.session;
  for (const link of Object.values(session.links || {})) {
    if (link.cbs && link.is_sender()) { link.send(reply); return; }
  }
}

function unbatch(raw) {
  const outer = rhea.message.decode(raw);
  const body = outer.body || {};
  const parts = body.multiple ? body.content : [body.content];
  return parts.map((part) => rhea.message.decode(part));
}

function enqueue(queue, request) {
  const id = request.message_id === undefined ? undefined : String(request.message_id);
  const t = now();
  for (const [seen, at] of queue.seenIds) if (at + DUPLICATE_WINDOW_MS <= t) queue.seenIds.delete(seen);
  if (queue.requiresDuplicateDetection && id !== undefined && queue.seenIds.has(id)) {
    return;  // accepted and dropped, as Service Bus does within the detection window
  }
  if (id !== undefined) queue.seenIds.set(id, t);
  const annotations = request.message_annotations || {};
  const scheduled = annotations['x-opt-scheduled-enqueue-time'];
  sequence += 1;
  queue.active.push({
    sequence,
    message: request,
    enqueuedAt: t,
    availableAt: scheduled ? new Date(scheduled).getTime() : t,
    deliveries: 0,
    lockToken: null,
    lockedUntil: 0,
  });
}

container.on('message', (context) => {
  const receiver = context.receiver;
  const request = context.message;
  if (receiver.cbs) {
    context.delivery.accept();
    if ((request.application_properties || {}).operation === 'put-token') putToken(context, request);
    return;
  }
  if (!receiver.entity) return;  // a refused link's in-flight transfer
  const queue = queues.get(receiver.entity.queue);
  const batch = context.format === BATCH_FORMAT;
  const size = batch ? request.length : rhea.message.encode(request).length;
  if (size > MAX_MESSAGE_SIZE) {
    context.delivery.reject(sbError('amqp:link:message-size-exceeded',
      `The received message (delivery-id:${context.delivery.id}, size:${size} bytes) `
        + `exceeds the limit (${MAX_MESSAGE_SIZE} bytes) currently allowed on the link.`));
    return;
  }
  for (const message of batch ? unbatch(request) : [request]) enqueue(queue, message);
  context.delivery.accept();
  deliverAll(queue.name);
});

// Keep delivering scheduled messages and messages whose lock expired.
setInterval(() => { for (const name of queues.keys()) deliverAll(name); }, 100).unref();

// ---------------------------------------------------------------- HTTPS: administration API
function escapeXml(s) {
  return String(s).replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' }[c]));
}

function iso(ms) { return new Date(ms).toISOString(); }

function queueEntry(host, queue) {
  expireLocks(queue, false);
  const t = now();
  const activeCount = queue.active.filter((e) => e.availableAt <= t).length;
  const scheduledCount = queue.active.length - activeCount;
  const total = queue.active.length + queue.deadLetters.length;
  const lock = `PT${Math.round(queue.lockDurationMs / 1000)}S`;
  return '<entry xmlns="http://www.w3.org/2005/Atom">'
    + `<id>https://${escapeXml(host)}/${escapeXml(queue.name)}?api-version=2021-05</id>`
    + `<title type="text">${escapeXml(queue.name)}</title>`
    + `<published>${iso(t)}</published><updated>${iso(t)}</updated>`
    + `<author><name>${escapeXml(host)}</name></author>`
    + `<link rel="self" href="https://${escapeXml(host)}/${escapeXml(queue.name)}?api-version=2021-05"/>`
    + '<content type="application/xml">'
    + '<QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" '
    + 'xmlns:i="http://www.w3.org/2001/XMLSchema-instance">'
    + `<LockDuration>${lock}</LockDuration>`
    + '<MaxSizeInMegabytes>1024</MaxSizeInMegabytes>'
    + `<RequiresDuplicateDetection>${queue.requiresDuplicateDetection}</RequiresDuplicateDetection>`
    + '<RequiresSession>false</RequiresSession>'
    + '<DefaultMessageTimeToLive>P14D</DefaultMessageTimeToLive>'
    + '<DeadLetteringOnMessageExpiration>true</DeadLetteringOnMessageExpiration>'
    + '<DuplicateDetectionHistoryTimeWindow>PT10M</DuplicateDetectionHistoryTimeWindow>'
    + `<MaxDeliveryCount>${queue.maxDeliveryCount}</MaxDeliveryCount>`
    + '<EnableBatchedOperations>true</EnableBatchedOperations>'
    + '<SizeInBytes>0</SizeInBytes>'
    + `<MessageCount>${total}</MessageCount>`
    + '<IsAnonymousAccessible>false</IsAnonymousAccessible>'
    + '<AuthorizationRules></AuthorizationRules>'
    + '<Status>Active</Status>'
    + `<CreatedAt>${iso(t)}</CreatedAt><UpdatedAt>${iso(t)}</UpdatedAt>`
    + `<AccessedAt>${iso(t)}</AccessedAt>`
    + '<SupportOrdering>true</SupportOrdering>'
    + '<CountDetails xmlns:d2p1="http://schemas.microsoft.com/netservices/2011/06/servicebus">'
    + `<d2p1:ActiveMessageCount>${activeCount}</d2p1:ActiveMessageCount>`
    + `<d2p1:DeadLetterMessageCount>${queue.deadLetters.length}</d2p1:DeadLetterMessageCount>`
    + `<d2p1:ScheduledMessageCount>${scheduledCount}</d2p1:ScheduledMessageCount>`
    + '<d2p1:TransferMessageCount>0</d2p1:TransferMessageCount>'
    + '<d2p1:TransferDeadLetterMessageCount>0</d2p1:TransferDeadLetterMessageCount>'
    + '</CountDetails>'
    + '<AutoDeleteOnIdle>P10675199DT2H48M5.4775807S</AutoDeleteOnIdle>'
    + '<EnablePartitioning>false</EnablePartitioning>'
    + '<EntityAvailabilityStatus>Available</EntityAvailabilityStatus>'
    + '<EnableExpress>false</EnableExpress>'
    + '</QueueDescription></content></entry>';
}

function emptyFeed(host) {
  // What Service Bus answers for an entity that does not exist: 200 with an empty feed.
  return '<feed xmlns="http://www.w3.org/2005/Atom">'
    + '<title type="text">Publicly Listed Services</title>'
    + `<id>uuid:${crypto.randomUUID()};id=1</id><updated>${iso(now())}</updated></feed>`;
}

function errorBody(code, detail) {
  return `<Error><Code>${code}</Code><Detail>${escapeXml(detail)}</Detail></Error>`;
}

function send(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function control(req, res, path, body) {
  if (req.method === 'POST' && path === 'queues') {
    createQueue(JSON.parse(body));
    return send(res, 201, 'application/json', '{}');
  }
  const expire = path.match(/^expire-locks\/(.+)$/);
  if (req.method === 'POST' && expire && queues.has(expire[1])) {
    const queue = queues.get(expire[1]);
    const locked = queue.active.filter((e) => e.lockToken).length;
    expireLocks(queue, true);
    return send(res, 200, 'application/json', JSON.stringify({ expired: locked }));
  }
  return send(res, 404, 'application/json', '{}');
}

const server = https.createServer({
  cert: fs.readFileSync(config.certFile),
  key: fs.readFileSync(config.keyFile),
}, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'https://stand-in');
    const path = decodeURIComponent(url.pathname.replace(/^\/+/, ''));
    if (path.startsWith('$test/')) {
      return control(req, res, path.slice('$test/'.length), Buffer.concat(chunks).toString());
    }
    const host = req.headers.host || 'localhost';
    const auth = req.headers.authorization || '';
    const token = auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : null;
    const rights = token !== null && Object.prototype.hasOwnProperty.call(tokens, token)
      ? tokens[token] : null;
    if (!rights) {
      return send(res, 401, 'application/xml', errorBody(401,
        'ExpiredToken: The token is expired or invalid. TrackingId:stand-in'));
    }
    if (req.method !== 'GET' || path.includes('/')) {
      return send(res, 400, 'application/xml', errorBody(400, 'not supported by the stand-in'));
    }
    if (!rights.includes('Manage')) {
      return send(res, 401, 'application/xml', errorBody(401,
        'Manage,EntityRead claims required for this operation. TrackingId:stand-in'));
    }
    const queue = queues.get(path);
    const body = queue ? queueEntry(host, queue) : emptyFeed(host);
    return send(res, 200, 'application/atom+xml;type=entry;charset=utf-8', body);
  });
});

const amqp = container.listen({ port: 0, host: '127.0.0.1' });
let amqpPort = null;
let httpsPort = null;
function ready() {
  if (amqpPort !== null && httpsPort !== null) {
    process.stdout.write(`${JSON.stringify({ amqpPort, httpsPort })}\n`);
  }
}
amqp.on('listening', () => { amqpPort = amqp.address().port; ready(); });
server.listen(0, '127.0.0.1', () => { httpsPort = server.address().port; ready(); });
process.stdin.on('end', () => process.exit(0));  // the test process went away
process.stdin.resume();
