// The soak's record of every operation and what it acknowledged, and the checks made from it after
// the run (the way Jepsen checks a database: a history of operations, checked afterwards).
import { CLASS } from './load.mjs';

const FIELDS = ['v', 'Bulk', 'Note'];
const INITIAL = { v: 0, Bulk: 0, Note: '' };

export class History {
  constructor(faults) {
    this.faults = faults;
    /** id -> { owner, tag, fields: {field: [{value, status, t}]}, states: [{state, status, t}] } */
    this.objects = new Map();
    this.ids = [];
    /** tag -> 'attempt' | 'acked' | 'doubt' */
    this.creates = new Map();
    /** tag -> when its create was sent: its event may arrive before the answer does. */
    this.createdFrom = new Map();
    this.files = [];
    /** owner -> the Bulk values it wrote (with their status): they reach objects its creates in doubt made too. */
    this.bulks = new Map();
    this.ops = new Map();
    this.failures = [];
    this.found = { lost: [], stale: [], duplicated: [], phantom: [], events: [], order: [], other: [] };
  }

  operation(kind, outcome, t0, t1, message) {
    let row = this.ops.get(kind);
    if (!row) this.ops.set(kind, (row = { total: 0, ok: 0, unavailable: 0, network: 0, session: 0, other: 0 }));
    row.total++;
    const column = outcome === 'ok' || outcome === 'unavailable' || outcome === 'network' || outcome === 'session' ? outcome : 'other';
    row[column]++;
    if (outcome !== 'ok') this.failures.push({ kind, outcome, t0, t1, message });
  }

  // what the load tells it
  attemptCreate(tag) {
    this.creates.set(tag, 'attempt');
    this.createdFrom.set(tag, Date.now());
  }

  created(tag, object, owner) {
    const id = object['~ObjectID'];
    this.creates.set(tag, 'acked');
    this.ids.push(id);
    this.#register(id, owner, tag, 'acked');
  }

  createInDoubt(tag) {
    this.creates.set(tag, 'doubt');
  }

  #register(id, owner, tag, status) {
    const t = Date.now();
    const fields = Object.fromEntries(FIELDS.map((field) => [field, [{ value: INITIAL[field], status, t }]]));
    const entry = { owner, tag, fields, states: [{ state: 'live', status, t, done: t }], created: t, sent: this.createdFrom.get(tag) ?? t };
    if (status === 'doubt') {
      // made by a create whose answer never came: its owner does not know it, but its bulk writes reach it
      entry.unowned = true;
      entry.doubt = true;
      for (const write of this.bulks.get(owner) ?? []) fields.Bulk.push({ value: write.value, status: 'doubt', t: write.t });
    }
    this.objects.set(id, entry);
    return entry;
  }

  attempt(id, field, value) {
    this.objects.get(id)?.fields[field].push({ value, status: 'attempt', t: Date.now() });
  }

  /** A bulk write of `owner`'s objects: the record of each known one gets it from the load, those created in doubt from here. */
  bulk(owner, value, status) {
    if (!this.bulks.has(owner)) this.bulks.set(owner, []);
    const list = this.bulks.get(owner);
    const known = list.find((write) => write.value === value);
    if (known) Object.assign(known, { status, done: Date.now() });
    else list.push({ value, status, t: Date.now() });
    for (const entry of this.objects.values()) {
      if (entry.owner === owner && entry.unowned && !entry.fields.Bulk.some((write) => write.value === value)) entry.fields.Bulk.push({ value, status: 'doubt', t: Date.now() });
    }
  }

  #mark(list, value, status, key = 'value') {
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i][key] === value && list[i].status === 'attempt') return void Object.assign(list[i], { status, done: Date.now() });
    }
  }

  acked(id, field, value, { foreign = false } = {}) {
    const entry = this.objects.get(id);
    if (!entry) return;
    this.#mark(entry.fields[field], value, 'acked');
    if (foreign) entry.foreign = true;
  }

  inDoubt(id, field, value) {
    const entry = this.objects.get(id);
    if (!entry) return;
    this.#mark(entry.fields[field], value, 'doubt');
    entry.doubt = true;
  }

  attemptState(id, state) {
    this.objects.get(id)?.states.push({ state, status: 'attempt', t: Date.now() });
  }

  ackedState(id, state) {
    const entry = this.objects.get(id);
    if (entry) this.#mark(entry.states, state, 'acked', 'state');
  }

  stateInDoubt(id, state) {
    const entry = this.objects.get(id);
    if (!entry) return;
    this.#mark(entry.states, state, 'doubt', 'state');
    entry.doubt = true;
  }

  mayHaveChanged(id) {
    const entry = this.objects.get(id);
    return Boolean(entry?.doubt || entry?.foreign);
  }

  uploaded(id, sha256, size) {
    this.ids.push(id);
    this.files.push({ id, sha256, size });
  }

  randomObjectId() {
    const ids = [...this.objects.keys()];
    return ids[Math.floor(Math.random() * ids.length)];
  }

  randomFile() {
    return this.files[Math.floor(Math.random() * this.files.length)];
  }

  /** A read object's fields must each be a value someone tried to write. */
  observed(id, object, how, actor) {
    let entry = this.objects.get(id);
    if (!entry && object['~ClassName'] === CLASS && this.creates.get(object.Tag) === 'doubt') entry = this.#register(id, object.Owner, object.Tag, 'doubt');
    if (!entry) return;
    for (const field of FIELDS) {
      if (!(field in object)) continue;
      if (!entry.fields[field].some((write) => write.value === object[field])) {
        this.phantom(id, `${actor?.name ?? 'check'} ${how}: ${field}=${JSON.stringify(object[field])}, a value no one wrote`);
      }
    }
  }

  /** When a violation was found, in the run's time. */
  #now() {
    return `(at +${((Date.now() - this.faults.start) / 1000).toFixed(1)} s)`;
  }

  stale(id, message) {
    this.found.stale.push(`${id}: ${message} ${this.#now()}`);
  }

  lost(id, message) {
    this.found.lost.push(`${id}: ${message}`);
  }

  phantom(id, message) {
    this.found.phantom.push(`${id}: ${message} ${this.#now()}`);
  }

  violation(kind, message) {
    this.found.other.push(`${kind}: ${message}`);
  }

  /** The values a field may hold at the end: the last acknowledged one, or one written in doubt after it. */
  static allowed(list, key = 'value') {
    let last = -1;
    list.forEach((write, i) => write.status === 'acked' && (last = i));
    return list.filter((write, i) => (i === last && write.status === 'acked') || (i > last && write.status === 'doubt')).map((write) => write[key]);
  }

  /**
   * The end state against the record: `live` maps the id of every SoakItem read at the end to its
   * object, `binned` the ids in the recycle bins, `files` the sha256 of each file downloaded at the end.
   */
  checkEnd({ live, binned, files }) {
    const given = new Map();
    for (const id of this.ids) given.set(id, (given.get(id) ?? 0) + 1);
    for (const [id, count] of given) if (count > 1) this.found.duplicated.push(`${id}: given ${count} times`);
    const tags = new Map();
    for (const [id, object] of live) {
      if (!this.objects.has(id)) {
        const status = this.creates.get(object.Tag);
        if (status === 'doubt') this.#register(id, object.Owner, object.Tag, 'doubt');
        else this.phantom(id, `an object no acknowledged or pending create made (Tag ${object.Tag})`);
      }
      if (tags.has(object.Tag)) this.found.duplicated.push(`${id}: same Tag as ${tags.get(object.Tag)} (one create, two objects)`);
      tags.set(object.Tag, id);
    }
    for (const [id, entry] of this.objects) {
      const states = History.allowed(entry.states, 'state');
      const object = live.get(id);
      const state = object ? 'live' : binned.has(id) ? 'recycled' : 'gone';
      if (!states.includes(state)) {
        this.lost(id, `is ${state} at the end, expected ${states.join(' or ')}`);
        continue;
      }
      if (!object) continue;
      for (const field of FIELDS) {
        const values = History.allowed(entry.fields[field]);
        if (!values.includes(object[field])) {
          const wrote = entry.fields[field].some((write) => write.value === object[field]);
          (wrote ? this.found.lost : this.found.phantom).push(`${id}: ${field}=${JSON.stringify(object[field])} at the end, last acknowledged ${JSON.stringify(values)}`);
        }
      }
    }
    for (const file of this.files) {
      const sha = files.get(file.id);
      if (sha !== file.sha256) this.lost(file.id, sha ? 'file bytes differ at the end' : 'file missing at the end');
    }
  }

  /** When an event arrived, and through which instance's stream. */
  #when(event) {
    return `+${((event.at - this.faults.start) / 1000).toFixed(1)} s on ${event.on}`;
  }

  /**
   * Each subscriber got, for every acknowledged change it may see made after its stream opened, an
   * event with that change, or a `reset` after the change began; and each object's events in order.
   */
  checkEvents(subscriber, until) {
    const byObject = new Map();
    for (const event of subscriber.events) {
      if (!byObject.has(event.id)) byObject.set(event.id, []);
      byObject.get(event.id).push(event);
      if (event.object) this.observed(event.id, event.object, 'event', subscriber);
    }
    const covered = (t) => subscriber.resets.some((at) => at >= t);
    let expected = 0;
    for (const [id, entry] of this.objects) {
      if (!subscriber.concerns(entry)) continue;
      const events = byObject.get(id) ?? [];
      const since = (t, done) => subscriber.openedAt !== undefined && t > subscriber.openedAt && done <= until;
      const need = (t, test, what, done = t) => {
        if (!since(t, done)) return;
        expected++;
        if (!events.some((event) => event.at >= t && test(event)) && !covered(t)) {
          this.found.events.push(`${subscriber.name}: no event for ${id} ${what} (written at +${((t - this.faults.start) / 1000).toFixed(1)} s)`);
        }
      };
      // from when the create was sent (its event may come before its answer), as for the other writes
      if (entry.states[0].status === 'acked') need(entry.sent, (event) => event.type === 'create', 'create', entry.created);
      for (const field of FIELDS) {
        for (const write of entry.fields[field].slice(1)) {
          if (write.status === 'acked') need(write.t, (event) => event.object?.[field] === write.value, `${field}=${JSON.stringify(write.value)}`, write.done);
        }
      }
      for (const change of entry.states.slice(1)) {
        if (change.status !== 'acked') continue;
        const types = change.state === 'recycled' ? ['delete', 'leave'] : ['create', 'enter', 'update'];
        need(change.t, (event) => types.includes(event.type), change.state === 'recycled' ? 'moved to the recycle bin' : 'restored', change.done);
      }
      for (const field of ['v', 'Bulk']) {
        let previous = { value: -Infinity };
        for (const event of events) {
          const value = event.object?.[field];
          if (typeof value !== 'number') continue;
          if (value < previous.value) this.found.order.push(`${subscriber.name}: ${id} ${field}=${value} (${this.#when(event)}) after ${previous.value} (${this.#when(previous)})`);
          previous = { value, at: event.at, on: event.on };
        }
      }
    }
    return expected;
  }
}
