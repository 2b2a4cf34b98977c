// The zkrx console's page: reads the view from the URL, opens its live stream (server-sent
// events) and draws what comes. Everything from ZooKeeper is put in the page as text
// (`textContent`, `el()`): never as markup, so a node name with markup in it shows as written.

const base = new URL(document.baseURI);
const route = location.pathname.slice(base.pathname.length).split('/');
const query = new URLSearchParams(location.search);
const view = route[0] || 'locks';
const main = document.getElementById('main');
const statusLine = document.getElementById('status');
let me = { canAct: false, actions: false, csrf: null, signIn: false, user: null };
/** Server time minus this browser's, from the last message. */
let skew = 0;

/** An element with `attributes` and children (strings become text nodes). */
function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.className = value;
    else if (name === 'text') element.textContent = String(value);
    else if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** A link inside the console (relative to where it is mounted). */
function link(href, text, attributes = {}) {
  return el('a', { href, ...attributes }, text);
}

function viewUrl(name, params) {
  const search = new URLSearchParams(params).toString();
  return search ? `${name}?${search}` : name;
}

function pad(value) {
  return String(value).padStart(2, '0');
}

/** As the `zkrx` command writes durations: 850ms, 12.3s, 4m05s, 2h03m, 3d04h. */
function duration(ms) {
  const value = Math.max(0, ms);
  if (value < 1000) return `${Math.floor(value)}ms`;
  if (value < 60000) return `${(Math.floor(value / 100) / 10).toFixed(1)}s`;
  const seconds = Math.floor(value / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${pad(seconds % 60)}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 1440) return `${Math.floor(minutes / 60)}h${pad(minutes % 60)}m`;
  const hours = Math.floor(minutes / 60);
  return `${Math.floor(hours / 24)}d${pad(hours % 24)}h`;
}

function clock(at) {
  const date = new Date(at);
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function now() {
  return Date.now() + skew;
}

/** A time that ticks: `prefix` + the time since `since` (ms, server clock). */
function ticking(since, prefix = '', exact = true) {
  return el(
    'span',
    { class: 'tick', dataset: { since: String(since), prefix: `${prefix}${exact ? '' : '≤'}` } },
    `${prefix}${exact ? '' : '≤'}${duration(now() - since)}`,
  );
}

setInterval(() => {
  for (const cell of document.querySelectorAll('.tick')) {
    cell.textContent = `${cell.dataset.prefix}${duration(now() - Number(cell.dataset.since))}`;
  }
}, 1000);

function session(id, scope) {
  const params = new URLSearchParams({ id });
  if (scope) params.append('in', scope);
  return link(`sessions?${params}`, `0x${id}`, { class: 'session' });
}

/** What a node's data says, as text (control characters shown as ?). */
function data(text) {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to replace them
  const shown = String(text ?? '').replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return shown === ''
    ? el('span', { class: 'muted' }, '-')
    : el('span', { class: 'data', title: shown }, shown);
}

function relative(node, lockPath) {
  const prefix = lockPath === '/' ? '/' : `${lockPath}/`;
  return node.startsWith(prefix) ? node.slice(prefix.length) : node;
}

function breadcrumb(name, path) {
  const parts = path.split('/').filter(Boolean);
  const crumbs = [link(viewUrl(name, { path: '/' }), '/')];
  let at = '';
  for (const part of parts) {
    at += `/${part}`;
    crumbs.push(link(viewUrl(name, { path: at }), part), el('span', { class: 'muted' }, '/'));
  }
  return el('div', { class: 'crumbs' }, crumbs);
}

function notice(text, kind = 'info') {
  const area =
    document.getElementById('notices') ?? document.body.appendChild(el('div', { id: 'notices' }));
  const item = el('div', { class: `notice ${kind}`, role: 'status' }, text);
  area.append(item);
  setTimeout(() => item.remove(), 8000);
}

async function act(action, participant, lockPath) {
  const what =
    action === 'release' ? 'Release (delete) this lock node' : 'Ask its holder to release';
  const warning =
    action === 'release'
      ? '\n\nDeleting it ends this hold (or place in line) at once; the next in line goes on. The holder is not told: a zkrx holder learns it and stops, a Curator or kazoo holder may go on as if it still held the lock.'
      : '\n\nA revocable holder decides when to release; others ignore it.';
  const question = `${what}?\n\nnode     ${participant.node}\nlock     ${lockPath}\nsession  0x${participant.sessionId}\ndata     ${participant.data}${warning}`;
  if (!window.confirm(question)) return;
  const response = await fetch(`api/actions/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-csrf-token': me.csrf ?? '' },
    body: JSON.stringify({ node: participant.node, version: participant.version }),
    credentials: 'same-origin',
  });
  const answer = await response.json().catch(() => ({}));
  notice(
    answer.message ?? answer.error ?? `HTTP ${response.status}`,
    response.ok ? 'info' : 'error',
  );
}

function actionCells(participant, lockPath) {
  if (!me.canAct) return [];
  return [
    el(
      'td',
      { class: 'actions' },
      el(
        'button',
        { type: 'button', class: 'danger', onclick: () => act('release', participant, lockPath) },
        'release --force',
      ),
      el(
        'button',
        { type: 'button', onclick: () => act('revoke', participant, lockPath) },
        'revoke',
      ),
    ),
  ];
}

function participantRow(lock, participant, role, scope, holds) {
  const since = holds
    ? ticking(
        participant.heldSince ?? participant.createdAt,
        'held ',
        participant.heldSince !== undefined,
      )
    : ticking(participant.createdAt, 'waiting ');
  return el(
    'tr',
    { class: holds ? 'holder' : 'waiter', dataset: { node: participant.node } },
    el('td', { class: 'role' }, role),
    el('td', {}, participant.mode),
    el('td', {}, session(participant.sessionId, scope)),
    el(
      'td',
      {},
      participant.revokeRequested
        ? el('span', { class: 'warn' }, 'revoke requested')
        : data(participant.data),
    ),
    el('td', { class: 'num' }, String(participant.token)),
    el('td', {}, since),
    el('td', { class: 'node' }, relative(participant.node, lock.path)),
    ...actionCells(participant, lock.path),
  );
}

function kindLabel(lock, command) {
  if (lock.kind === 'mutex')
    return command === 'leaders' ? 'election (selector layout) or mutex' : 'mutex';
  if (lock.kind === 'read-write') return 'read-write lock';
  return lock.kind;
}

function counts(lock, command) {
  if (lock.kind === 'semaphore') {
    return `${lock.holders.length}${lock.maxLeases === undefined ? '' : ` of ${lock.maxLeases}`} leases held · ${lock.waiting} waiting`;
  }
  if (lock.kind === 'election' || command === 'leaders') {
    return lock.holders.length === 0
      ? 'no leader'
      : `leader + ${lock.waiting} candidate${lock.waiting === 1 ? '' : 's'}`;
  }
  return `${lock.holders.length} holder${lock.holders.length === 1 ? '' : 's'} · ${lock.waiting} waiting`;
}

/** The rows of a lock's queue, in the order the recipe admits them: holders, then waiters. */
function queueEntries(lock, command) {
  const leads = lock.kind === 'election' || command === 'leaders';
  return [
    ...lock.holders.map((participant) => ({
      participant,
      role: leads ? 'leads' : 'holds',
      holds: true,
    })),
    ...lock.waiters.map((participant, index) => ({
      participant,
      role: `waits ${index + 1}`,
      holds: false,
    })),
  ];
}

function queueHead() {
  const head = [
    'ROLE',
    'MODE',
    'SESSION',
    'DATA',
    'TOKEN',
    'SINCE',
    'NODE',
    ...(me.canAct ? ['ACTIONS'] : []),
  ];
  return el(
    'thead',
    {},
    el(
      'tr',
      {},
      head.map((name) => el('th', {}, name)),
    ),
  );
}

function moreWaiting(lock, command) {
  const more = lock.waiting - lock.waiters.length;
  if (more <= 0) return null;
  return el(
    'tfoot',
    {},
    el(
      'tr',
      {},
      el(
        'td',
        { colspan: me.canAct ? 8 : 7 },
        link(viewUrl(command, { path: lock.path }), `… ${more} more waiting: open ${lock.path}`),
      ),
    ),
  );
}

function lockTable(lock, command, scope) {
  const rows = queueEntries(lock, command).map(({ participant, role, holds }) =>
    participantRow(lock, participant, role, scope, holds),
  );
  return el(
    'table',
    { class: 'queue' },
    queueHead(),
    el('tbody', {}, rows),
    moreWaiting(lock, command),
  );
}

/** Queues longer than this are drawn a window of rows at a time (virtual scrolling). */
const QUEUE_WINDOW_MIN = 60;
const QUEUE_ROW_HEIGHT = 26;

/**
 * The path's own lock, whose whole queue is shown (up to 10,000): kept between messages, and
 * for a long queue only the rows in view drawn — a hand-over redraws a screen of rows, not the
 * queue. A row is redrawn only when what it shows changed.
 */
class QueueView {
  constructor() {
    this.entries = [];
    this.drawn = new Map();
    this.title = el('h3', {});
    this.scroller = el('div', { class: 'queue-scroller' });
    this.body = el('tbody', {});
    this.table = el('table', { class: 'queue' }, queueHead(), this.body);
    this.scroller.append(this.table);
    this.scroller.addEventListener('scroll', () => requestAnimationFrame(() => this.draw()));
    this.element = el('section', { class: 'lock' }, this.title, this.scroller);
  }

  update(lock, command, scope) {
    this.lock = lock;
    this.command = command;
    this.scope = scope;
    this.element.dataset.path = lock.path;
    this.title.replaceChildren(...lockTitle(lock, command).childNodes);
    this.entries = queueEntries(lock, command);
    const windowed = this.entries.length > QUEUE_WINDOW_MIN;
    this.scroller.classList.toggle('windowed', windowed);
    const foot = moreWaiting(lock, command);
    this.table.tFoot?.remove();
    if (foot) this.table.append(foot);
    this.draw();
  }

  /** A row for `entry`: the one drawn before if it shows the same. */
  row(entry) {
    const { participant, role, holds } = entry;
    const key = `${role} ${participant.version} ${participant.heldSince} ${participant.revokeRequested}`;
    const drawn = this.drawn.get(participant.node);
    if (drawn && drawn.key === key) return drawn.element;
    const element = participantRow(this.lock, participant, role, this.scope, holds);
    this.drawn.set(participant.node, { key, element });
    return element;
  }

  draw() {
    const windowed = this.scroller.classList.contains('windowed');
    let first = 0;
    let count = this.entries.length;
    if (windowed) {
      first = Math.max(0, Math.floor(this.scroller.scrollTop / QUEUE_ROW_HEIGHT) - 5);
      count = Math.ceil((this.scroller.clientHeight || 600) / QUEUE_ROW_HEIGHT) + 10;
    }
    const shown = this.entries.slice(first, first + count);
    const rows = shown.map((entry) => this.row(entry));
    const keep = new Set(shown.map((entry) => entry.participant.node));
    for (const node of this.drawn.keys()) if (!keep.has(node)) this.drawn.delete(node);
    const spacer = (rowsHidden) => {
      const row = el(
        'tr',
        { class: 'spacer', 'aria-hidden': 'true' },
        el('td', { colspan: me.canAct ? 8 : 7 }),
      );
      // Through the CSSOM: the Content-Security-Policy allows no style attribute.
      row.style.height = `${rowsHidden * QUEUE_ROW_HEIGHT}px`;
      return row;
    };
    const after = this.entries.length - first - shown.length;
    this.body.replaceChildren(
      ...(first > 0 ? [spacer(first)] : []),
      ...rows,
      ...(windowed && after > 0 ? [spacer(after)] : []),
    );
  }
}

function lockTitle(lock, command) {
  return el(
    'h3',
    {},
    link(viewUrl(command, { path: lock.path }), lock.path),
    el(
      'span',
      { class: 'muted' },
      ` ${kindLabel(lock, command)} · ${lock.layout} · ${counts(lock, command)}`,
    ),
    lock.lostAt
      ? el('span', { class: 'alarm' }, ' LOST a lease ', ticking(lock.lostAt), ' ago ')
      : null,
  );
}

function lockBlock(lock, command, scope) {
  return el(
    'section',
    { class: 'lock', dataset: { path: lock.path } },
    lockTitle(lock, command),
    lockTable(lock, command, scope),
  );
}

function historyLine(entry) {
  const lockLink = link(
    viewUrl(
      entry.scope === 'fleet' ? 'partitions' : entry.lockKind === 'election' ? 'leaders' : 'locks',
      { path: entry.path },
    ),
    entry.path,
  );
  const who = (id, text) =>
    id === undefined ? '?' : entry.scope === 'fleet' ? id : [session(id), text ? ` (${text})` : ''];
  const held =
    entry.heldMs === undefined ? '' : ` (held ${entry.exact ? '' : '≤'}${duration(entry.heldMs)})`;
  let what;
  if (entry.scope === 'fleet') {
    what =
      entry.kind === 'joined' || entry.kind === 'left'
        ? [entry.item, ` ${entry.kind}`]
        : entry.kind === 'moved'
          ? [entry.item, ` moved: ${entry.from} → ${entry.to} (token ${entry.token})`]
          : entry.kind === 'taken'
            ? [entry.item, ` taken by ${entry.to} (token ${entry.token})`]
            : [entry.item, ` free (was ${entry.from})`];
  } else if (entry.lost) {
    what = [
      el('span', { class: 'alarm' }, ' LOST '),
      ' ',
      who(entry.from, entry.fromData),
      `: session ended while holding${held}`,
      entry.to ? ['; now ', who(entry.to, entry.toData), ' holds'] : '',
    ];
  } else if (entry.kind === 'handed-over') {
    what = [
      'handed over: ',
      who(entry.from, entry.fromData),
      ' → ',
      who(entry.to, entry.toData),
      held,
    ];
  } else if (entry.kind === 'ended') {
    what = ['free: ', who(entry.from, entry.fromData), ` no longer holds${held}`];
  } else {
    what = ['taken: ', who(entry.to, entry.toData), ' holds'];
  }
  return el(
    'li',
    { class: `event ${entry.lost ? 'lost' : ''}`, dataset: { kind: entry.kind } },
    el('time', {}, clock(entry.at)),
    ' ',
    lockLink,
    ' ',
    what,
  );
}

function recentPanel(entries, title) {
  return el(
    'aside',
    { class: 'recent' },
    el('h2', {}, title),
    entries.length === 0
      ? el('p', { class: 'muted' }, 'none yet')
      : el('ol', { class: 'events' }, [...entries].reverse().map(historyLine)),
  );
}

function watchedLine(watched) {
  if (!watched) return null;
  return el(
    'p',
    { class: 'muted small' },
    `watching ${watched.locks} lock path${watched.locks === 1 ? '' : 's'} and ${watched.fleets} fleet${watched.fleets === 1 ? '' : 's'} for the pages open`,
  );
}

/**
 * The locks and leaders views: a shell made once per view, whose parts are redrawn from each
 * message — the path's own lock kept (`QueueView`), a row's lock redrawn only when it changed.
 */
const locksState = { key: null, parts: null, queue: null, rows: new Map() };

function locksShell(key) {
  const part = (tag, attributes = {}) => el(tag, attributes);
  const parts = {
    head: part('div'),
    root: part('div'),
    terms: part('div'),
    rows: part('div'),
    folders: part('div'),
    empty: part('div'),
    pages: part('div'),
    watched: part('div'),
    recent: part('div'),
  };
  main.replaceChildren(
    el(
      'div',
      { class: 'layout' },
      el(
        'div',
        { class: 'content' },
        parts.head,
        parts.root,
        parts.terms,
        parts.rows,
        parts.folders,
        parts.empty,
        parts.pages,
        parts.watched,
      ),
      parts.recent,
    ),
  );
  locksState.key = key;
  locksState.parts = parts;
  locksState.queue = null;
  locksState.rows = new Map();
}

function termsSection(message, scope) {
  if (!message.terms || message.terms.length === 0) return null;
  return el(
    'section',
    { class: 'terms' },
    el('h2', {}, 'Terms seen while open'),
    el(
      'ol',
      {},
      message.terms.map((term) =>
        el(
          'li',
          {},
          session(term.leader, scope),
          term.data ? ` (${term.data})` : '',
          ` led from ${clock(term.from)}${term.atMost ? ' or later' : ''} `,
          term.to
            ? `for ${term.atMost ? '≤' : ''}${duration(term.to - term.from)}: ${term.ended}`
            : ticking(term.from, 'for '),
        ),
      ),
    ),
  );
}

function folderList(folders, command) {
  if (folders.length === 0) return null;
  return el(
    'ul',
    { class: 'folders' },
    folders.map((row) =>
      el(
        'li',
        {},
        link(viewUrl(command, { path: row.path }), `${row.name}/`),
        el(
          'span',
          { class: 'muted' },
          row.mode === 'unknown'
            ? ' …'
            : ` ${row.children} child${row.children === 1 ? '' : 'ren'}`,
        ),
        row.lostAt
          ? el('span', { class: 'alarm' }, ` LOST a lease ${duration(now() - row.lostAt)} ago `)
          : null,
        row.problem ? el('span', { class: 'error' }, ` ${row.problem}`) : null,
      ),
    ),
  );
}

function pagesNav(message, command) {
  const pages = Math.max(1, Math.ceil(message.total / message.pageSize));
  if (pages <= 1) return null;
  const page = message.page;
  return el(
    'nav',
    { class: 'pages' },
    page > 0 ? link(viewUrl(command, { path: message.path, page: page - 1 }), '← previous') : null,
    ` page ${page + 1} of ${pages} (${message.total} children) `,
    page + 1 < pages
      ? link(viewUrl(command, { path: message.path, page: page + 1 }), 'next →')
      : null,
  );
}

function drawLocks(message) {
  const command = message.view;
  const scope = `${command}:${message.path}`;
  const key = `${command} ${message.path} ${message.page}`;
  if (locksState.key !== key || !main.contains(locksState.parts?.head)) locksShell(key);
  const { parts } = locksState;
  parts.head.replaceChildren(
    breadcrumb(command, message.path),
    el('p', { class: 'cli' }, `zkrx ${command} ${message.path} --watch`),
    ...(message.problem ? [el('p', { class: 'error' }, message.problem)] : []),
  );
  if (message.root) {
    if (!locksState.queue) {
      locksState.queue = new QueueView();
      parts.root.replaceChildren(locksState.queue.element);
    }
    locksState.queue.update(message.root, command, scope);
  } else if (locksState.queue) {
    locksState.queue = null;
    parts.root.replaceChildren();
  }
  parts.terms.replaceChildren(termsSection(message, scope) ?? '');
  // A row's lock redrawn only when what it shows changed (50 rows, a handful of waiters each).
  const rows = new Map();
  const blocks = [];
  for (const row of message.rows) {
    if (!row.lock) continue;
    const text = JSON.stringify(row.lock);
    const before = locksState.rows.get(row.path);
    const block =
      before && before.text === text ? before.block : lockBlock(row.lock, command, scope);
    rows.set(row.path, { text, block });
    blocks.push(block);
  }
  locksState.rows = rows;
  parts.rows.replaceChildren(...blocks);
  parts.folders.replaceChildren(
    folderList(
      message.rows.filter((row) => !row.lock),
      command,
    ) ?? '',
  );
  parts.empty.replaceChildren(
    !message.root && message.rows.length === 0
      ? el(
          'p',
          { class: 'muted empty' },
          message.listed
            ? `No ${command === 'locks' ? 'locks' : 'elections'} under ${message.path}. Waiting for changes.`
            : 'reading…',
        )
      : '',
  );
  parts.pages.replaceChildren(pagesNav(message, command) ?? '');
  parts.watched.replaceChildren(watchedLine(message.watched) ?? '');
  parts.recent.replaceChildren(
    recentPanel(message.recent ?? [], `Recent changes (under ${message.path})`),
  );
}

// Fleets: the items are kept here and drawn a window at a time (virtual scrolling).
const ROW_HEIGHT = 26;
const fleetState = {
  items: new Map(),
  names: [],
  filter: '',
  meta: null,
  scroller: null,
  body: null,
  /** The scroller's height (its style's, until a layout tells it). */
  height: 420,
  resized: null,
  /** Each row's searchText, made when the filter first needs it. */
  texts: new Map(),
  flashed: new Map(),
};

/** A row as sent: an item whose owner is not read yet comes as its name alone. */
function rowOf(sent) {
  return typeof sent === 'string' ? [sent, null, null, null, null, '', true] : sent;
}

function fleetRowElement(row) {
  const [item, member, sessionId, token, since, waiting, unread] = row;
  const poison = fleetState.meta?.poisoned?.find((entry) => entry.item === item);
  const owner = unread
    ? el('span', { class: 'muted' }, 'reading…')
    : sessionId === null
      ? el(
          'span',
          { class: poison ? 'error' : 'warn' },
          poison ? `poison: ${poison.code} (${poison.member})` : 'free',
        )
      : member === null
        ? el('span', { class: 'warn' }, 'not a member')
        : member;
  const flashed = (fleetState.flashed.get(item) ?? 0) > Date.now() - 2000;
  return el(
    'div',
    { class: `item-row${flashed ? ' flash' : ''}`, role: 'row', dataset: { item } },
    el('span', { class: 'c-item' }, item),
    el('span', { class: 'c-owner' }, owner),
    el('span', { class: 'c-token num' }, token === null ? '-' : String(token)),
    el(
      'span',
      { class: 'c-session' },
      sessionId === null ? '-' : session(sessionId, `partitions:${fleetState.meta?.path}`),
    ),
    el('span', { class: 'c-since' }, since === null ? '-' : ticking(since, 'held ', false)),
    el('span', { class: 'c-waiting' }, waiting || '-'),
  );
}

/** What the filter searches in a row, lowercased once (a move's redraw filters 10,000 rows). */
function searchText(row) {
  return `${row[0]}\n${row[1] ?? ''}\n${row[2] ?? ''}\n${row[5]}`.toLowerCase();
}

function filteredNames() {
  const needle = fleetState.filter.toLowerCase();
  if (needle === '') return fleetState.names;
  const texts = fleetState.texts;
  return fleetState.names.filter((name) => {
    let text = texts.get(name);
    if (text === undefined) {
      text = searchText(fleetState.items.get(name));
      texts.set(name, text);
    }
    return text.includes(needle);
  });
}

let filtered = [];
function drawWindow() {
  const scroller = fleetState.scroller;
  if (!scroller) return;
  const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - 5);
  const count = Math.ceil(fleetState.height / ROW_HEIGHT) + 10;
  const rows = filtered
    .slice(first, first + count)
    .map((name) => fleetRowElement(fleetState.items.get(name)));
  fleetState.body.style.height = `${filtered.length * ROW_HEIGHT}px`;
  const windowElement = el('div', { class: 'window' }, rows);
  // Through the CSSOM: the Content-Security-Policy allows no style attribute.
  windowElement.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
  fleetState.body.replaceChildren(windowElement);
  document.getElementById('shown').textContent =
    `${filtered.length} of ${fleetState.names.length} items`;
}

/** A member's row, kept while what it shows is the same (a move changes two members' counts). */
const memberRows = new Map();
function memberRow(meta, member, index) {
  const key = JSON.stringify([meta.view, meta.path, meta.kind, index, member]);
  const kept = memberRows.get(member.id);
  if (kept?.key === key) return kept.row;
  const row = el(
    'tr',
    { dataset: { member: member.id } },
    el('td', {}, String(index + 1)),
    el('td', {}, member.id),
    el('td', {}, session(member.sessionId, `${meta.view}:${meta.path}`)),
    el('td', {}, data(member.data)),
    el('td', {}, ticking(member.joinedAt, '', true), ' ago'),
    meta.kind === 'partition' ? el('td', { class: 'num' }, String(member.items)) : null,
  );
  memberRows.set(member.id, { key, row });
  return row;
}

function keptMemberRows(meta) {
  const rows = meta.members.map((member, index) => memberRow(meta, member, index));
  const present = new Set(meta.members.map((member) => member.id));
  for (const id of memberRows.keys()) if (!present.has(id)) memberRows.delete(id);
  return rows;
}

function fleetHeader(meta) {
  if (meta.found === false)
    return [
      el('p', { class: 'muted empty' }, `No fleet at ${meta.path} yet. Waiting for changes.`),
    ];
  if (meta.found === undefined) return [el('p', { class: 'muted' }, 'reading…')];
  const members = el(
    'table',
    { class: 'members' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        [
          '#',
          'MEMBER',
          'SESSION',
          'DATA',
          'JOINED',
          ...(meta.kind === 'partition' ? ['ITEMS'] : []),
        ].map((name) => el('th', {}, name)),
      ),
    ),
    el('tbody', {}, keptMemberRows(meta)),
  );
  const summary =
    meta.kind === 'partition'
      ? `partition · ${meta.members.length} members · ${meta.itemCount} items (${meta.owned} owned)${meta.poisoned.length ? ` · ${meta.poisoned.length} poison` : ''}`
      : `membership · ${meta.members.length} members`;
  const reading = meta.complete === false ? ' · reading owners…' : '';
  return [
    el(
      'p',
      {},
      el('strong', {}, meta.path),
      ` ${summary}${reading} `,
      meta.balanced === undefined
        ? null
        : el(
            'span',
            { class: meta.balanced ? 'ok badge' : 'warn badge' },
            meta.balanced ? 'balanced' : 'not balanced',
          ),
    ),
    meta.coordinator ? el('p', { class: 'muted' }, `coordinator: ${meta.coordinator}`) : null,
    ...meta.poisoned.map((entry) =>
      el(
        'p',
        { class: 'error' },
        `poison: ${entry.item}: ${entry.message} (delete ${entry.node} to try it again)`,
      ),
    ),
    members,
  ];
}

function drawFleetShell(message) {
  const meta = { ...message };
  delete meta.items;
  fleetState.meta = meta;
  const partition = meta.kind === 'partition' && message.view === 'partitions';
  const filter = el('input', {
    type: 'search',
    placeholder: 'filter items: name, owner, session (plain text)',
    value: fleetState.filter,
    'aria-label': 'filter items',
  });
  filter.addEventListener('input', () => {
    fleetState.filter = filter.value;
    filtered = filteredNames();
    drawWindow();
  });
  const scroller = el('div', { class: 'scroller', role: 'table' });
  const body = el('div', { class: 'scroll-body' });
  scroller.append(body);
  scroller.addEventListener('scroll', () => requestAnimationFrame(drawWindow));
  // Its height as laid out, told after each layout that changed it: a message's redraw reads no
  // layout (reading clientHeight there would lay out the page before its first paint).
  fleetState.resized?.disconnect();
  fleetState.resized = new ResizeObserver(([entry]) => {
    if (entry.contentRect.height === fleetState.height) return;
    fleetState.height = entry.contentRect.height;
    drawWindow();
  });
  fleetState.resized.observe(scroller);
  fleetState.scroller = partition ? scroller : null;
  fleetState.body = body;
  const recent = el('aside', { class: 'recent', id: 'fleet-recent' });
  main.replaceChildren(
    el(
      'div',
      { class: 'layout' },
      el(
        'div',
        { class: 'content' },
        breadcrumb(message.view, message.path),
        el('p', { class: 'cli' }, `zkrx ${message.view} ${message.path} --watch`),
        message.problem ? el('p', { class: 'error' }, message.problem) : null,
        el('div', { id: 'fleet-head' }, fleetHeader(meta)),
        partition
          ? [
              el(
                'div',
                { class: 'filter' },
                filter,
                ' ',
                el('span', { id: 'shown', class: 'muted' }),
              ),
              el(
                'div',
                { class: 'item-row head', role: 'row' },
                ['ITEM', 'OWNER', 'TOKEN', 'SESSION', 'SINCE', 'WAITING'].map((name, index) =>
                  el(
                    'span',
                    {
                      class: ['c-item', 'c-owner', 'c-token', 'c-session', 'c-since', 'c-waiting'][
                        index
                      ],
                    },
                    name,
                  ),
                ),
              ),
              scroller,
            ]
          : null,
        watchedLine(message.watched),
      ),
      recent,
    ),
  );
}

function drawFleet(message) {
  if (
    message.reset ||
    !fleetState.meta ||
    fleetState.meta.kind !== message.kind ||
    fleetState.meta.found !== message.found
  ) {
    fleetState.items = new Map();
    fleetState.texts = new Map();
    for (const sent of message.items) {
      const row = rowOf(sent);
      fleetState.items.set(row[0], row);
    }
    fleetState.names = [...fleetState.items.keys()];
    drawFleetShell(message);
  } else {
    let added = false;
    const at = Date.now();
    for (const sent of message.items) {
      const row = rowOf(sent);
      if (!fleetState.items.has(row[0])) added = true;
      fleetState.items.set(row[0], row);
      fleetState.texts.delete(row[0]);
      fleetState.flashed.set(row[0], at);
    }
    for (const name of message.removed ?? []) {
      fleetState.items.delete(name);
      fleetState.texts.delete(name);
      added = true;
    }
    if (added) fleetState.names = [...fleetState.items.keys()].sort();
    const meta = { ...message };
    delete meta.items;
    fleetState.meta = meta;
    document.getElementById('fleet-head')?.replaceChildren(...fleetHeader(meta));
  }
  filtered = filteredNames();
  drawWindow();
  document.body.dataset.fleetComplete = String(message.complete !== false);
}

function drawFleetRecent(entries) {
  const panel = document.getElementById('fleet-recent');
  if (!panel) return;
  panel.replaceChildren(...recentPanel(entries, 'Recent changes').childNodes);
}

function table(head, rows) {
  return el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        head.map((name) => el('th', {}, name)),
      ),
    ),
    el('tbody', {}, rows),
  );
}

function drawSession(message) {
  const state = {
    alive: ['ok', 'alive: it has nodes the console watches'],
    ended: ['alarm', 'ended: its nodes went in one transaction (expired or closed)'],
    gone: ['warn', 'no nodes left (released, or ended: ZooKeeper does not say which)'],
    'not-seen': ['muted', 'no nodes seen in what the console watches'],
  }[message.state];
  main.replaceChildren(
    el(
      'div',
      { class: 'content' },
      el(
        'h2',
        {},
        `Session 0x${message.id} `,
        el('span', { class: `badge ${state[0]}` }, state[1]),
      ),
      message.data.length
        ? el(
            'p',
            {},
            'owner data: ',
            message.data.map((text) => [data(text), ' ']),
          )
        : null,
      el('h3', {}, 'Holds and leads'),
      message.holds.length
        ? table(
            ['PATH', 'KIND', 'MODE', 'TOKEN', 'SINCE', 'DATA'],
            message.holds.map((hold) =>
              el(
                'tr',
                {},
                el(
                  'td',
                  {},
                  link(
                    viewUrl(hold.kind === 'election' ? 'leaders' : 'locks', { path: hold.path }),
                    hold.path,
                  ),
                ),
                el('td', {}, hold.leads ? 'leads (election)' : hold.kind),
                el('td', {}, hold.mode),
                el('td', { class: 'num' }, String(hold.token)),
                el(
                  'td',
                  {},
                  ticking(hold.heldSince ?? hold.createdAt, 'held ', hold.heldSince !== undefined),
                ),
                el('td', {}, data(hold.data)),
              ),
            ),
          )
        : el('p', { class: 'muted' }, 'none'),
      el('h3', {}, 'Waits'),
      message.waits.length
        ? table(
            ['PATH', 'KIND', 'PLACE', 'MODE', 'SINCE'],
            message.waits.map((wait) =>
              el(
                'tr',
                {},
                el('td', {}, link(viewUrl('locks', { path: wait.path }), wait.path)),
                el('td', {}, wait.kind),
                el('td', { class: 'num' }, String(wait.place)),
                el('td', {}, wait.mode),
                el('td', {}, ticking(wait.createdAt, 'waiting ')),
              ),
            ),
          )
        : el('p', { class: 'muted' }, 'none'),
      el('h3', {}, 'Fleets'),
      message.members.length || message.owns.length
        ? [
            ...message.members.map((member) =>
              el(
                'p',
                {},
                'member ',
                el('strong', {}, member.id),
                ' of ',
                link(
                  viewUrl(member.kind === 'partition' ? 'partitions' : 'members', {
                    path: member.path,
                  }),
                  member.path,
                ),
                ' (',
                data(member.data),
                ')',
              ),
            ),
            message.owns.length
              ? table(
                  ['FLEET', 'ITEM', 'TOKEN', 'SINCE'],
                  message.owns.map((own) =>
                    el(
                      'tr',
                      {},
                      el('td', {}, link(viewUrl('partitions', { path: own.path }), own.path)),
                      el('td', {}, own.item),
                      el('td', { class: 'num' }, String(own.token)),
                      el('td', {}, ticking(own.createdAt, 'held ', false)),
                    ),
                  ),
                )
              : null,
          ]
        : el('p', { class: 'muted' }, 'none'),
      el('h3', {}, 'Seen while open'),
      message.history.length
        ? el('ol', { class: 'events' }, [...message.history].reverse().map(historyLine))
        : el('p', { class: 'muted' }, 'nothing yet'),
      watchedLine(message.watched),
    ),
  );
}

const historyState = { entries: [], filter: '' };
function drawHistory(message) {
  if (message.reset) historyState.entries = [];
  historyState.entries.push(...message.entries);
  historyState.entries.splice(0, Math.max(0, historyState.entries.length - 1000));
  let list = document.getElementById('history-list');
  if (!list) {
    const filter = el('input', {
      type: 'search',
      placeholder: 'filter: path, session, item (plain text)',
      'aria-label': 'filter history',
    });
    filter.addEventListener('input', () => {
      historyState.filter = filter.value.toLowerCase();
      drawHistoryList();
    });
    list = el('ol', { id: 'history-list', class: 'events' });
    main.replaceChildren(
      el(
        'div',
        { class: 'content' },
        el('h2', {}, 'History: hand-overs, losses and moves seen while open'),
        el('div', { class: 'filter' }, filter),
        list,
        el('p', { id: 'history-watched' }),
      ),
    );
  }
  document.getElementById('history-watched').replaceChildren(watchedLine(message.watched) ?? '');
  drawHistoryList();
}

function drawHistoryList() {
  const needle = historyState.filter;
  const shown = historyState.entries.filter(
    (entry) =>
      needle === '' ||
      [entry.path, entry.from, entry.to, entry.item, entry.fromData, entry.toData].some((field) =>
        String(field ?? '')
          .toLowerCase()
          .includes(needle),
      ),
  );
  const list = document.getElementById('history-list');
  list.replaceChildren(
    ...(shown.length
      ? [...shown].reverse().map(historyLine)
      : [el('li', { class: 'muted' }, 'nothing yet')]),
  );
}

function drawNav() {
  const path = query.get('path') ?? '/';
  const nav = document.getElementById('nav');
  const item = (name, href) => link(href, name, { class: view === name ? 'current' : '' });
  nav.replaceChildren(
    item('locks', viewUrl('locks', { path })),
    item('leaders', viewUrl('leaders', { path })),
    item('members', viewUrl('members', { path })),
    item('partitions', viewUrl('partitions', { path })),
    item('history', 'history'),
  );
  const who = document.getElementById('who');
  if (me.signIn && !me.user) {
    const token = el('input', {
      type: 'password',
      name: 'token',
      placeholder: 'token',
      autocomplete: 'current-password',
      'aria-label': 'token',
    });
    who.replaceChildren(
      el(
        'form',
        { method: 'post', action: 'api/sign-in', class: 'sign-in' },
        token,
        el('input', { type: 'hidden', name: 'back', value: `${view}${location.search}` }),
        el('button', { type: 'submit' }, 'sign in to act'),
      ),
    );
  } else if (me.user) {
    who.replaceChildren(
      el(
        'span',
        { class: 'badge ok' },
        me.canAct ? `${me.user} · may act` : `${me.user} · read-only`,
      ),
      me.signIn
        ? el(
            'form',
            { method: 'post', action: 'api/sign-out', class: 'sign-in' },
            el('button', { type: 'submit' }, 'sign out'),
          )
        : '',
    );
  } else {
    who.replaceChildren(el('span', { class: 'badge muted' }, 'read-only'));
  }
}

let lastRecent = [];
function onMessage(message) {
  skew = message.serverNow - Date.now();
  const state = message.session;
  statusLine.textContent = `${state} · updated ${clock(message.serverNow)}`;
  statusLine.className = `status ${state === 'connected' || state === 'reconnected' ? 'ok' : 'alarm'}`;
  if (message.type === 'locks') drawLocks(message);
  else if (message.type === 'fleet') {
    // For the bench: the last fleet message's sending (server clock) and arrival (this one's).
    document.body.dataset.fleetSentAt = String(message.serverNow);
    document.body.dataset.fleetInAt = String(Date.now());
    document.body.dataset.firstFleetSentAt ??= String(message.serverNow);
    drawFleet(message);
    drawFleetRecent(lastRecent);
  } else if (message.type === 'session') drawSession(message);
  else if (message.type === 'history') drawHistory(message);
  document.body.dataset.updates = String(Number(document.body.dataset.updates ?? 0) + 1);
  // Since the navigation began: what the bench reads as the page's own share of a first view.
  document.body.dataset.firstDrawMs ??= String(Math.round(performance.now()));
}

async function start() {
  // Since the navigation began, for the bench: the script running, the user known, the first
  // message in (before it is drawn; firstDrawMs: after).
  document.body.dataset.scriptMs = String(Math.round(performance.now()));
  me = await fetch('api/me', { credentials: 'same-origin' }).then((response) => response.json());
  document.body.dataset.meMs = String(Math.round(performance.now()));
  drawNav();
  const params = new URLSearchParams(query);
  params.set('view', view);
  if (view === 'sessions') params.set('id', route[1] ?? query.get('id') ?? '');
  const source = new EventSource(`api/stream?${params}`);
  source.onmessage = (event) => {
    document.body.dataset.firstMessageMs ??= String(Math.round(performance.now()));
    onMessage(JSON.parse(event.data));
  };
  source.addEventListener('session', (event) => {
    const { session: state } = JSON.parse(event.data);
    statusLine.textContent = state;
    statusLine.className = `status ${state === 'connected' || state === 'reconnected' ? 'ok' : 'alarm'}`;
  });
  source.onerror = () => {
    statusLine.textContent = 'console unreachable: retrying…';
    statusLine.className = 'status alarm';
  };
  if (view === 'members' || view === 'partitions') {
    // The fleet's recent changes come from the history stream, filtered to this fleet.
    const path = query.get('path') ?? '/';
    const history = new EventSource('api/stream?view=history');
    history.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.reset) lastRecent = [];
      lastRecent.push(
        ...message.entries.filter((entry) => entry.scope === 'fleet' && entry.path === path),
      );
      lastRecent = lastRecent.slice(-20);
      drawFleetRecent(lastRecent);
    };
  }
}

start().catch((error) => {
  main.replaceChildren(
    el('p', { class: 'error' }, `The console could not start: ${error.message}`),
  );
});
