/**
 * The help of `zkrx` and of each of its commands (`zkrx --help`, `zkrx <command> --help`).
 */
import type { CommandName } from './options';
import { DEFAULT_CONNECT, DEFAULT_TIMEOUT_MS } from './options';

const connection = `Connection:
  -c, --connect <hosts>  ZooKeeper: host:port[,host:port...][/chroot]
                         (default: $ZK_CONNECT, else ${DEFAULT_CONNECT})
      --timeout <ms>     give up connecting after this long (default ${DEFAULT_TIMEOUT_MS})
      --no-color         no colours (also NO_COLOR=1)
  -h, --help             this help`;

const exitCodes = `Exit codes: 0 done; 1 failed (ZooKeeper unreachable, node gone, not confirmed);
2 wrong usage (unknown command or option, bad path, not a lock node).`;

const root = `zkrx — who holds which ZooKeeper lock: locks, semaphores, read-write locks and
elections written by zkrx, Apache Curator or kazoo; and who is in a zkrx fleet.

Usage:
  zkrx locks <path> [--watch] [--json]    locks under <path>: holders, then waiters in order
  zkrx leaders <path> [--watch] [--json]  elections under <path>: leader, then candidates
  zkrx members <path> [--watch] [--json]  a fleet's members (@zkrx/fleet), in join order
  zkrx partitions <path> [--watch] [--json]
                                          a partition's items: owner, token, who waits
  zkrx release <node> --force [--yes]     delete a stuck holder's lock node (asks first)
  zkrx revoke <node>                      ask a holder to release (Curator's revocation)
  zkrx console [<path>] [--actions]       the web console: locks, elections, fleets, live
  zkrx dev-server [--port <port>]         a ZooKeeper for development (Java needed), until Ctrl-C
  zkrx help <command>                     help for one command

${connection}
  -v, --version          the version of zkrx

${exitCodes}`;

const pages: Record<CommandName, string> = {
  locks: `Usage: zkrx locks <path> [--watch] [--json]

The locks at <path> and under it: mutexes, read-write locks and semaphores, in zkrx's
and Curator's layout or kazoo's. For each: who holds it, then who waits in the order the
recipe lets them in, with their session, what their node says (zkrx: host:pid; Curator:
the client's IP address; kazoo: the identifier), how long, and the node's name (the
full path is <lock path>/<name>: what zkrx release and zkrx revoke take).

  -w, --watch  a live view: redraws on every change (one ZooKeeper watch on <path>),
               hold times ticking, hand-overs and lost leases listed; q quits
      --json   JSON: {"path", "locks": [...]} (with --watch: one line per change)

A mutex's layout is also a LeaderSelector's and whileLeader's: such elections show here
too (and in zkrx leaders).

Example:
  zkrx locks /locks --connect zk1:2181
  zkrx locks /locks --watch

${connection}

${exitCodes}`,
  leaders: `Usage: zkrx leaders <path> [--watch] [--json]

The elections at <path> and under it: Curator LeaderLatch layout (zkrx joinElection and
leadership), and the mutex layout that Curator's LeaderSelector, zkrx's whileLeader and
kazoo's Election use. The leader first, then the candidates in line, with their session,
id (the node's data) and how long.

  -w, --watch  a live view: redraws on every change, leader changes listed; q quits
      --json   JSON: {"path", "locks": [...]} (with --watch: one line per change)

Example:
  zkrx leaders /election

${connection}

${exitCodes}`,
  members: `Usage: zkrx members <path> [--watch] [--json]

The members of a @zkrx/fleet membership group or partition at <path>, in join order:
their id, session, data (what the member gave: an address, a host) and how long ago
they joined. For a partition (<path> has members/ and items/), <path>/members is read
and each member's count of owned items shown.

  -w, --watch  a live view: redraws on every change (one ZooKeeper watch on <path>);
               joins, leaves and moves listed; q quits
      --json   JSON: {"path", "fleet": {...}} (with --watch: one line per change)

Example:
  zkrx members /fleet/shards

${connection}

${exitCodes}`,
  partitions: `Usage: zkrx partitions <path> [--watch] [--json]

The items of a @zkrx/fleet partition at <path>: who owns each (the holder of the item's
lock, <path>/items/<item>), its fencing token, its session, since when, and who waits
for it (a move in progress), then each member's count. Balanced when every member owns
floor(k/m) or ceil(k/m) of the k owned items. Items live in the members: an item whose
idle lock path was removed by ZooKeeper is not listed.

  -w, --watch  a live view: redraws on every change; items taken, moved and freed, and
               members joining and leaving, listed; q quits
      --json   JSON: {"path", "fleet": {...}} (with --watch: one line per change)

Example:
  zkrx partitions /fleet/shards --watch

${connection}

${exitCodes}`,
  release: `Usage: zkrx release <node> --force [--yes]

Deletes one lock node: for a holder that is stuck (hung, or gone but its session not
yet expired), so the next in line gets the lock. Shows the node's holder and asks for
confirmation first. The holder is not told: a zkrx holder learns it (LockLostError,
reason node-deleted) and stops; a Curator or kazoo holder does not, and may go on
working as if it held the lock — prefer zkrx revoke for holders that listen, and stop
a stuck process before releasing its lock.

<node> is a full lock node path, as zkrx locks lists it: <lock path>/<name>.
Refuses anything that is not a lock, semaphore or election node.

      --force  required: says you mean it
  -y, --yes    do not ask (for scripts; without a terminal, --yes is required)

Example:
  zkrx release /locks/orders/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000007 --force

${connection}

${exitCodes}`,
  revoke: `Usage: zkrx revoke <node>

Asks the holder of a lock node to release it, Curator's way (writes __REVOKE__ into the
node): a zkrx lease taken with { revocable: true } and a Curator lock made revocable
hear it and decide when to release; other holders ignore it. Exits 1 when the node is
gone already.

Example:
  zkrx revoke /locks/reindex/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000003

${connection}

${exitCodes}`,
  console: `Usage: zkrx console [<path>] [--port <port>] [--host <address>] [--actions]

The web console (@zkrx/console), until Ctrl-C: every lock, read-write lock, semaphore and
election under a path, with holders and the queue in order; fleets' members and items;
one session's everything; the hand-overs, losses and moves seen while it is open. Pushed
by ZooKeeper watches as they happen. Its views are named as these commands are: locks,
leaders, members, partitions (http://127.0.0.1:7181/locks?path=/locks).

Read-only unless started with --actions: then release --force and revoke are offered,
each confirmed and audited (a JSON line on stderr: who, what, when), and signing in takes
a token — ZKRX_CONSOLE_TOKEN, or one made for the run and printed here.

      --port <port>     where to listen (default 7181; 0: any free port)
      --host <address>  the address to listen on (default 127.0.0.1: this machine only)
      --actions         offer release --force and revoke, behind the token

Example:
  npx @zkrx/cli console --connect zk1:2181
  ZKRX_CONSOLE_TOKEN=... zkrx console /locks --actions

${connection}

Exit codes: 0 stopped by Ctrl-C; 1 ZooKeeper unreachable or the port taken; 2 wrong usage.`,
  'dev-server': `Usage: zkrx dev-server [--port <port>]

Starts ZooKeeper for development on 127.0.0.1:<port> (default 2181, where apps and zkrx
commands look when not told), in a temporary directory, and runs until Ctrl-C: then it stops
and its data is removed. Needs Java and a ZooKeeper release (Debian: apt install zookeeper;
or ZOOKEEPER_HOME), as @zkrx/testing does. Without Java, a container does the same:
  docker run --rm -p 2181:2181 zookeeper:3.9

      --port <port>  the client port (default 2181)
  -h, --help         this help

Example:
  npx @zkrx/cli dev-server     (zkrx dev-server where @zkrx/cli is installed)
  ZK_CONNECT=127.0.0.1:2181 npm run start:dev

Exit codes: 0 stopped by Ctrl-C; 1 could not start (no Java or ZooKeeper, the port taken).`,
  help: `Usage: zkrx help <command>

Prints the help of one command: ${['locks', 'leaders', 'members', 'partitions', 'release', 'revoke', 'console', 'dev-server'].join(', ')}.`,
};

/** The help of `command`, or of zkrx itself. */
export function helpText(command?: CommandName): string {
  return `${command === undefined ? root : pages[command]}\n`;
}
