// InteropPeer.java - an Apache Curator 5.x peer for zkrx's interop tests, driven by JSON lines.
//
// Run with the single-file launcher (or compile it once with javac; packages/interop/src/peer.ts does):
//   java -cp "$CURATOR_CP" InteropPeer.java --connect 127.0.0.1:2181 [--session-timeout-ms 4000]
//
// Protocol (one JSON object per line; the full description is in packages/interop/README.md):
//   stdout, first line:  {"event":"ready","impl":"curator","version":"5.4.0","zookeeper":"3.8.0"}
//   stdin:               {"id":"a1","cmd":"acquire","recipe":"mutex","path":"/x","timeoutMs":5000}
//   stdout:              {"id":"a1","ok":true,"node":"/x/_c_...-lock-0000000000"}
//                        {"id":"a1","ok":false,"error":"timeout","message":"..."}
//   stdin:               {"id":"r1","cmd":"release","handle":"a1"}      -> {"id":"r1","ok":true}
//   events (no id):      {"event":"leadership","handle":"l1","isLeader":true}
//                        {"event":"connection","session":"default","state":"SUSPENDED"}
// Nothing but these JSON lines goes to stdout (System.out is redirected to stderr; slf4j-nop).
// The peer exits when stdin closes, so a crashed driver never leaves a JVM behind.
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.locks.LockInternals;
import org.apache.curator.framework.recipes.locks.LockInternalsSorter;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

public class InteropPeer {
    static PrintStream out;
    static String connect;
    static int sessionTimeoutMs = 4000;
    static final Map<String, CuratorFramework> sessions = new ConcurrentHashMap<>();
    static final Map<String, Hold> holds = new ConcurrentHashMap<>();
    static final Map<String, CompletableFuture<Latch>> latches = new ConcurrentHashMap<>();
    static final ExecutorService pool = Executors.newCachedThreadPool(daemonThreads("peer-command"));
    static volatile boolean shuttingDown;

    public static void main(String[] args) {
        out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err); // only protocol lines on the real stdout
        try {
            for (int i = 0; i < args.length; i += 2) {
                String value = i + 1 < args.length ? args[i + 1] : null;
                switch (args[i]) {
                    case "--connect" -> connect = value;
                    case "--session-timeout-ms" -> sessionTimeoutMs = Integer.parseInt(value);
                    default -> throw new IllegalArgumentException("unknown argument " + args[i]);
                }
            }
            if (connect == null) throw new IllegalArgumentException("--connect host:port is required");
            session("default");
        } catch (Throwable e) {
            e.printStackTrace();
            send(map("event", "error", "message", String.valueOf(e)));
            Runtime.getRuntime().halt(2);
        }
        send(map("event", "ready", "impl", "curator", "version", mavenVersion("org.apache.curator", "curator-recipes"),
                "zookeeper", mavenVersion("org.apache.zookeeper", "zookeeper"), "pid", ProcessHandle.current().pid()));
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.isBlank()) dispatch(line);
            }
        } catch (Throwable e) {
            e.printStackTrace();
        }
        shutdown(0); // stdin closed: the driver is gone
    }

    // ---- commands ----

    static void dispatch(String line) {
        Map<String, Object> request;
        try {
            Object parsed = Json.parse(line);
            if (!(parsed instanceof Map)) throw new IllegalArgumentException("expected a JSON object");
            @SuppressWarnings("unchecked") Map<String, Object> object = (Map<String, Object>) parsed;
            request = object;
        } catch (RuntimeException e) {
            send(map("id", null, "ok", false, "error", "bad-request", "message", "unparsable line: " + e.getMessage()));
            return;
        }
        String id = string(request, "id", null);
        String cmd = string(request, "cmd", "");
        try {
            if (id == null) throw new BadRequest("every command needs an id");
            switch (cmd) {
                case "ping" -> reply(id, map());
                case "quit" -> {
                    reply(id, map());
                    shutdown(0);
                }
                case "acquire" -> startHold(id, request);
                case "release" -> release(id, request);
                case "held" -> held(id, request);
                case "downgrade" -> downgrade(id, request);
                case "revoke" -> pool.execute(() -> run(id, () -> revoke(request)));
                case "participants" -> pool.execute(() -> run(id, () -> participants(request)));
                case "session" -> pool.execute(() -> run(id, () -> sessionInfo(request)));
                case "session-close" -> pool.execute(() -> run(id, () -> closeSession(request)));
                case "latch-start" -> {
                    // Registered now, so that commands naming it wait for it instead of racing it.
                    CompletableFuture<Latch> started = new CompletableFuture<>();
                    if (latches.putIfAbsent(id, started) != null) throw new BadRequest("handle " + id + " is in use");
                    pool.execute(() -> run(id, () -> latchStart(id, request, started)));
                }
                case "latch-await" -> pool.execute(() -> run(id, () -> latchAwait(request)));
                case "latch-status" -> pool.execute(() -> run(id, () -> latchStatus(request)));
                case "latch-close" -> pool.execute(() -> run(id, () -> latchClose(request)));
                default -> throw new Unsupported("unknown command \"" + cmd + "\"");
            }
        } catch (Throwable e) {
            fail(id, e);
        }
    }

    interface Work { Map<String, Object> call() throws Exception; }

    static void run(String id, Work work) {
        try {
            reply(id, work.call());
        } catch (Throwable e) {
            fail(id, e);
        }
    }

    static void startHold(String id, Map<String, Object> request) {
        String recipe = string(request, "recipe", null);
        if (recipe == null) throw new BadRequest("acquire needs a recipe");
        if (!List.of("mutex", "read", "write", "semaphore", "selector").contains(recipe))
            throw new Unsupported("recipe \"" + recipe + "\" is not supported by the Curator peer");
        Hold hold = new Hold(id, recipe, path(request), string(request, "session", "default"),
                number(request, "timeoutMs"), number(request, "leases"), string(request, "participantId", null),
                Boolean.TRUE.equals(request.get("revocable")));
        if (hold.revocable && !List.of("mutex", "read", "write").contains(recipe))
            throw new Unsupported("Curator makes only its mutex and read-write locks revocable, not " + recipe);
        if (holds.putIfAbsent(id, hold) != null) throw new BadRequest("handle " + id + " is in use");
        hold.thread = new Thread(hold, "hold-" + id);
        hold.thread.setDaemon(true);
        hold.thread.start();
    }

    static void release(String id, Map<String, Object> request) {
        String handle = string(request, "handle", null);
        Hold hold = handle == null ? null : holds.get(handle);
        if (hold == null) throw new UnknownHandle("no acquire in progress or held with id " + handle);
        synchronized (hold) {
            hold.releases.add(id);
            if (!hold.acquired) { // still waiting: give up (the acquire answers "cancelled")
                hold.cancelRequested = true;
                hold.thread.interrupt();
            }
            hold.notifyAll();
        }
    }

    /**
     * Write hold -> read hold on the thread that holds the write lock (Curator's re-entrance:
     * acquire the read lock, then release the write lock). The handle then names the read hold.
     */
    static void downgrade(String id, Map<String, Object> request) {
        String handle = string(request, "handle", null);
        Hold hold = handle == null ? null : holds.get(handle);
        if (hold == null || hold.held == null) throw new UnknownHandle("nothing held with id " + handle);
        synchronized (hold) {
            hold.tasks.add(() -> {
                try {
                    Held read = hold.held.downgrade();
                    hold.held = read;
                    reply(id, map("node", read.node()));
                } catch (Throwable e) {
                    fail(id, e);
                }
            });
            hold.notifyAll();
        }
    }

    /** Curator's Revoker.attemptRevoke: asks the holder of a lock node to release it. */
    static Map<String, Object> revoke(Map<String, Object> request) throws Exception {
        String node = string(request, "node", null);
        if (node == null) throw new BadRequest("revoke needs a node");
        Revoker.attemptRevoke(session(string(request, "session", "default")), node);
        return map();
    }

    static void held(String id, Map<String, Object> request) throws Exception {
        String handle = string(request, "handle", null);
        Hold hold = handle == null ? null : holds.get(handle);
        Held held = hold == null ? null : hold.held;
        if (held == null) throw new UnknownHandle("nothing held with id " + handle);
        reply(id, map("held", held.isHeld()));
    }

    static Map<String, Object> participants(Map<String, Object> request) throws Exception {
        String recipe = string(request, "recipe", "mutex");
        String path = path(request);
        CuratorFramework client = session(string(request, "session", "default"));
        try {
            if (recipe.equals("latch")) {
                List<Object> participants = new ArrayList<>();
                for (Participant p : new LeaderLatch(client, path).getParticipants())
                    participants.add(map("id", p.getId(), "isLeader", p.isLeader()));
                return map("participants", participants);
            }
            if (recipe.equals("rwlock")) // every reader and writer, in the order its waiters decide by
                return map("nodes", sortedByDriver(client, new InterProcessReadWriteLock(client, path).writeLock(), path));
            Collection<String> nodes = switch (recipe) {
                case "mutex", "selector" -> new InterProcessMutex(client, path).getParticipantNodes();
                case "read" -> new InterProcessReadWriteLock(client, path).readLock().getParticipantNodes();
                case "write" -> new InterProcessReadWriteLock(client, path).writeLock().getParticipantNodes();
                case "semaphore" -> new InterProcessSemaphoreV2(client, path, 1).getParticipantNodes();
                default -> throw new Unsupported("recipe \"" + recipe + "\" has no participants here");
            };
            List<Object> names = new ArrayList<>();
            for (String node : nodes) names.add(node.substring(node.lastIndexOf('/') + 1));
            return map("nodes", names);
        } catch (KeeperException.NoNodeException e) {
            return recipe.equals("latch") ? map("participants", List.of()) : map("nodes", List.of());
        }
    }

    static Map<String, Object> sessionInfo(Map<String, Object> request) throws Exception {
        ZooKeeper zk = session(string(request, "session", "default")).getZookeeperClient().getZooKeeper();
        StringBuilder password = new StringBuilder();
        for (byte b : zk.getSessionPasswd()) password.append(String.format("%02x", b));
        return map("sessionId", Long.toHexString(zk.getSessionId()), "password", password.toString());
    }

    static Map<String, Object> closeSession(Map<String, Object> request) {
        String name = string(request, "session", null);
        if (name == null) throw new BadRequest("session-close needs a session");
        CuratorFramework client = sessions.remove(name);
        if (client == null) throw new UnknownHandle("no open session " + name);
        for (Hold hold : holds.values()) {
            if (hold.sessionName.equals(name)) {
                hold.sessionClosed = true;
                synchronized (hold) {
                    if (!hold.acquired) hold.thread.interrupt();
                }
            }
        }
        for (Map.Entry<String, CompletableFuture<Latch>> entry : latches.entrySet()) {
            Latch latch = entry.getValue().getNow(null);
            if (latch != null && latch.sessionName().equals(name)) latches.remove(entry.getKey());
        }
        client.close(); // the server deletes the session's ephemeral nodes
        return map();
    }

    // ---- LeaderLatch ----

    record Latch(LeaderLatch latch, String sessionName, CuratorFramework client) {}

    static Map<String, Object> latchStart(String id, Map<String, Object> request, CompletableFuture<Latch> started)
            throws Exception {
        try {
            String sessionName = string(request, "session", "default");
            CuratorFramework client = session(sessionName);
            String participant = string(request, "participantId", "");
            LeaderLatch latch = new LeaderLatch(client, path(request), participant, LeaderLatch.CloseMode.NOTIFY_LEADER);
            latch.addListener(new LeaderLatchListener() {
                @Override public void isLeader() { send(map("event", "leadership", "handle", id, "isLeader", true)); }
                @Override public void notLeader() { send(map("event", "leadership", "handle", id, "isLeader", false)); }
            });
            latch.start();
            started.complete(new Latch(latch, sessionName, client));
            return map();
        } catch (Throwable e) {
            latches.remove(id);
            started.completeExceptionally(new UnknownHandle("latch " + id + " failed to start: " + e));
            throw e;
        }
    }

    static Latch latchOf(Map<String, Object> request) throws InterruptedException {
        String handle = string(request, "handle", null);
        CompletableFuture<Latch> latch = handle == null ? null : latches.get(handle);
        if (latch == null) throw new UnknownHandle("no started latch with id " + handle);
        try {
            return latch.get();
        } catch (java.util.concurrent.ExecutionException e) {
            throw (RuntimeException) e.getCause();
        }
    }

    static Map<String, Object> latchAwait(Map<String, Object> request) throws Exception {
        LeaderLatch latch = latchOf(request).latch();
        Long timeoutMs = number(request, "timeoutMs");
        if (timeoutMs == null) latch.await();
        else latch.await(timeoutMs, TimeUnit.MILLISECONDS);
        return map("hasLeadership", latch.hasLeadership());
    }

    static Map<String, Object> latchStatus(Map<String, Object> request) throws Exception {
        LeaderLatch latch = latchOf(request).latch();
        List<Object> participants = new ArrayList<>();
        for (Participant p : latch.getParticipants()) participants.add(map("id", p.getId(), "isLeader", p.isLeader()));
        return map("hasLeadership", latch.hasLeadership(), "leader", latch.getLeader().getId(),
                "participants", participants, "node", latch.getOurPath(), "state", latch.getState().name());
    }

    static Map<String, Object> latchClose(Map<String, Object> request) throws Exception {
        Latch entry = latchOf(request);
        String node = entry.latch().getOurPath();
        latches.remove(string(request, "handle", null));
        entry.latch().close();
        awaitGone(entry.client(), node); // close() deletes the node in the background
        return map();
    }

    // ---- holds: one thread per acquire (Curator's mutexes belong to the thread that acquired them) ----

    interface Held {
        String node();
        /** The library's own view: does it believe it holds? */
        boolean isHeld();
        void release() throws Exception;
        /** A write lock's holder takes the read lock and releases the write lock. */
        default Held downgrade() throws Exception {
            throw new BadRequest("only a held write lock can be downgraded");
        }
    }

    static final class Hold implements Runnable {
        final String id, recipe, path, sessionName, participantId;
        final Long timeoutMs, leases;
        /** makeRevocable: a revocation request is told as a `revoked` event (the test releases). */
        final boolean revocable;
        final LinkedBlockingQueue<String> releases = new LinkedBlockingQueue<>();
        /** Work that must run on the holding thread (downgrade), signalled on this. */
        final LinkedBlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();
        volatile boolean sessionClosed;
        volatile Held held;
        boolean acquired, cancelRequested; // guarded by this
        Thread thread;

        Hold(String id, String recipe, String path, String sessionName, Long timeoutMs, Long leases, String participantId,
             boolean revocable) {
            this.id = id; this.recipe = recipe; this.path = path; this.sessionName = sessionName;
            this.timeoutMs = timeoutMs; this.leases = leases; this.participantId = participantId;
            this.revocable = revocable;
        }

        @Override public void run() {
            Held held;
            try {
                held = acquire(session(sessionName));
            } catch (Throwable e) {
                holds.remove(id);
                if (cancelled()) send(error(id, "cancelled", "released while waiting"));
                else if (sessionClosed) send(error(id, "session-closed", "the session was closed while waiting"));
                else fail(id, e);
                answerReleases();
                return;
            }
            if (held == null) {
                holds.remove(id);
                send(error(id, "timeout", recipe + " " + path + " not acquired within " + timeoutMs + " ms"));
                answerReleases();
                return;
            }
            boolean cancelled;
            synchronized (this) {
                cancelled = cancelRequested;
                acquired = true;
            }
            Thread.interrupted(); // a cancel that came too late to stop the acquire
            if (cancelled) {
                try {
                    held.release();
                } catch (Throwable e) {
                    e.printStackTrace();
                }
                holds.remove(id);
                send(error(id, "cancelled", "released while waiting"));
                answerReleases();
                return;
            }
            this.held = held;
            send(map("id", id, "ok", true, "node", held.node()));
            String releaseId = null;
            try {
                while (releaseId == null) {
                    Runnable task = tasks.poll();
                    if (task != null) {
                        task.run();
                        continue;
                    }
                    releaseId = releases.poll();
                    if (releaseId == null && (sessionClosed || shuttingDown)) break;
                    synchronized (this) {
                        if (releaseId == null && releases.isEmpty() && tasks.isEmpty()) wait(100);
                    }
                }
            } catch (InterruptedException e) {
                releaseId = null;
            }
            if (releaseId == null) {
                holds.remove(id); // session closed or shutting down: the server removes the node
                answerReleases();
                return;
            }
            try {
                this.held.release(); // the downgraded hold, if any
                holds.remove(id);
                reply(releaseId, map());
            } catch (Throwable e) {
                holds.remove(id);
                fail(releaseId, e);
            }
            answerReleases();
        }

        synchronized boolean cancelled() {
            return cancelRequested;
        }

        /** Answers release requests that arrived while the acquire was failing. */
        void answerReleases() {
            String releaseId;
            while ((releaseId = releases.poll()) != null) reply(releaseId, map());
        }

        Held acquire(CuratorFramework client) throws Exception {
            switch (recipe) {
                case "mutex", "read", "write" -> {
                    InterProcessReadWriteLock rw = recipe.equals("mutex") ? null : new InterProcessReadWriteLock(client, path);
                    InterProcessMutex mutex = switch (recipe) {
                        case "read" -> rw.readLock();
                        case "write" -> rw.writeLock();
                        default -> new InterProcessMutex(client, path);
                    };
                    if (revocable) mutex.makeRevocable(revoked -> send(map("event", "revoked", "handle", id)));
                    if (timeoutMs == null) mutex.acquire();
                    else if (!mutex.acquire(timeoutMs, TimeUnit.MILLISECONDS)) return null;
                    String node = lockPathOf(mutex);
                    return new Held() {
                        public String node() { return node; }
                        public boolean isHeld() { return mutex.isAcquiredInThisProcess(); }
                        public void release() throws Exception { mutex.release(); }
                        public Held downgrade() throws Exception {
                            if (!recipe.equals("write")) return Held.super.downgrade();
                            InterProcessMutex read = rw.readLock();
                            if (!read.acquire(10, TimeUnit.SECONDS))
                                throw new IllegalStateException("the write holder was not granted the read lock");
                            String readNode = lockPathOf(read);
                            mutex.release();
                            return new Held() {
                                public String node() { return readNode; }
                                public boolean isHeld() { return read.isAcquiredInThisProcess(); }
                                public void release() throws Exception { read.release(); }
                            };
                        }
                    };
                }
                case "semaphore" -> {
                    if (leases == null || leases < 1) throw new BadRequest("semaphore needs leases >= 1");
                    InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, leases.intValue());
                    Lease lease = timeoutMs == null ? semaphore.acquire() : semaphore.acquire(timeoutMs, TimeUnit.MILLISECONDS);
                    if (lease == null) return null;
                    String name = lease.getNodeName();
                    String node = name.startsWith("/") ? name : path + "/leases/" + name;
                    return new Held() {
                        public String node() { return node; }
                        public boolean isHeld() { return true; } // a Lease has no such view
                        public void release() { semaphore.returnLease(lease); }
                    };
                }
                case "selector" -> {
                    return select(client);
                }
                default -> throw new Unsupported("recipe " + recipe);
            }
        }

        /** LeaderSelector: "held" while takeLeadership runs; released by returning from it. */
        Held select(CuratorFramework client) throws Exception {
            CompletableFuture<String> leading = new CompletableFuture<>();
            CountDownLatch done = new CountDownLatch(1);
            LeaderSelector[] selector = new LeaderSelector[1];
            selector[0] = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
                @Override public void takeLeadership(CuratorFramework framework) throws Exception {
                    leading.complete(selectorNode(selector[0]));
                    try {
                        done.await();
                    } catch (InterruptedException e) {
                        if (done.getCount() > 0) send(map("event", "lost", "handle", id));
                        throw e;
                    }
                }
            });
            if (participantId != null) selector[0].setId(participantId);
            selector[0].start();
            String node;
            try {
                node = timeoutMs == null ? leading.get() : leading.get(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                selector[0].close();
                return null;
            } catch (InterruptedException e) {
                selector[0].close();
                throw e;
            }
            return new Held() {
                public String node() { return node; }
                public boolean isHeld() { return selector[0].hasLeadership(); }
                public void release() throws Exception {
                    done.countDown();
                    selector[0].close();
                    awaitGone(client, node);
                }
            };
        }
    }

    // ---- sessions ----

    static synchronized CuratorFramework session(String name) throws Exception {
        CuratorFramework existing = sessions.get(name);
        if (existing != null) return existing;
        if (shuttingDown) throw new IllegalStateException("shutting down");
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(sessionTimeoutMs)
                .connectionTimeoutMs(sessionTimeoutMs)
                .retryPolicy(new ExponentialBackoffRetry(100, 3))
                .build();
        client.getConnectionStateListenable().addListener((framework, state) ->
                send(map("event", "connection", "session", name, "state", state.name())));
        client.start();
        if (!client.blockUntilConnected(15, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("could not connect to " + connect + " within 15 s");
        }
        sessions.put(name, client);
        return client;
    }

    static void shutdown(int status) {
        shuttingDown = true;
        Thread killer = new Thread(() -> {
            try { Thread.sleep(5000); } catch (InterruptedException ignored) { }
            Runtime.getRuntime().halt(status);
        });
        killer.setDaemon(true);
        killer.start();
        try {
            for (CompletableFuture<Latch> latch : latches.values()) {
                try { latch.getNow(null).latch().close(); } catch (Throwable ignored) { }
            }
            for (CuratorFramework client : sessions.values()) {
                try { client.close(); } catch (Throwable ignored) { }
            }
        } finally {
            out.flush();
            Runtime.getRuntime().halt(status); // Curator's threads would keep the JVM alive
        }
    }

    // ---- helpers ----

    /** The node a Curator mutex (or read/write lock) holds: its protected getLockPath(). */
    static String lockPathOf(InterProcessMutex mutex) {
        try {
            Method getter = InterProcessMutex.class.getDeclaredMethod("getLockPath");
            getter.setAccessible(true);
            return (String) getter.invoke(mutex);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /**
     * All children of a lock path sorted by the mutex's own driver: the list its waiters decide
     * by. (A read/write lock's getParticipantNodes() keeps only its own side's nodes.)
     */
    static List<String> sortedByDriver(CuratorFramework client, InterProcessMutex mutex, String path) throws Exception {
        Field internalsField = InterProcessMutex.class.getDeclaredField("internals");
        internalsField.setAccessible(true);
        Object internals = internalsField.get(mutex);
        Field driverField = LockInternals.class.getDeclaredField("driver");
        driverField.setAccessible(true);
        LockInternalsSorter sorter = (LockInternalsSorter) driverField.get(internals);
        return LockInternals.getSortedChildren(client, path, "__WRIT__", sorter);
    }

    static String selectorNode(LeaderSelector selector) {
        try {
            Field field = LeaderSelector.class.getDeclaredField("mutex");
            field.setAccessible(true);
            return lockPathOf((InterProcessMutex) field.get(selector));
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** Waits until a node is deleted (recipes that delete in the background), at most 10 s. */
    static void awaitGone(CuratorFramework client, String node) throws Exception {
        if (node == null) return;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (client.checkExists().forPath(node) != null) {
            if (System.nanoTime() > deadline) throw new IllegalStateException(node + " still exists after 10 s");
            Thread.sleep(10);
        }
    }

    static String mavenVersion(String group, String artifact) {
        String resource = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = InteropPeer.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) return "unknown";
            Properties properties = new Properties();
            properties.load(in);
            return properties.getProperty("version", "unknown");
        } catch (Exception e) {
            return "unknown";
        }
    }

    static java.util.concurrent.ThreadFactory daemonThreads(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    static String path(Map<String, Object> request) {
        String path = string(request, "path", null);
        if (path == null || !path.startsWith("/")) throw new BadRequest("path must be an absolute znode path");
        return path;
    }

    static String string(Map<String, Object> request, String key, String fallback) {
        Object value = request.get(key);
        if (value == null) return fallback;
        if (!(value instanceof String)) throw new BadRequest(key + " must be a string");
        return (String) value;
    }

    static Long number(Map<String, Object> request, String key) {
        Object value = request.get(key);
        if (value == null) return null;
        if (!(value instanceof Number)) throw new BadRequest(key + " must be a number");
        return ((Number) value).longValue();
    }

    static Map<String, Object> map(Object... pairs) {
        Map<String, Object> result = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) result.put((String) pairs[i], pairs[i + 1]);
        return result;
    }

    static void reply(String id, Map<String, Object> fields) {
        Map<String, Object> message = map("id", id, "ok", true);
        message.putAll(fields);
        send(message);
    }

    static Map<String, Object> error(String id, String code, String message) {
        return map("id", id, "ok", false, "error", code, "message", message);
    }

    static void fail(String id, Throwable e) {
        String code = e instanceof BadRequest ? "bad-request"
                : e instanceof Unsupported ? "unsupported"
                : e instanceof UnknownHandle ? "unknown-handle"
                : "failed";
        if (code.equals("failed")) e.printStackTrace();
        send(error(id, code, e.getClass().getSimpleName() + ": " + e.getMessage()));
    }

    static synchronized void send(Map<String, Object> message) {
        out.println(Json.write(message));
        out.flush();
    }

    @SuppressWarnings("serial") static final class BadRequest extends RuntimeException { BadRequest(String m) { super(m); } }
    @SuppressWarnings("serial") static final class Unsupported extends RuntimeException { Unsupported(String m) { super(m); } }
    @SuppressWarnings("serial") static final class UnknownHandle extends RuntimeException { UnknownHandle(String m) { super(m); } }

    /** A small JSON reader and writer (objects, arrays, strings, numbers, booleans, null). */
    static final class Json {
        private final String text;
        private int at;

        private Json(String text) { this.text = text; }

        static Object parse(String text) {
            Json json = new Json(text);
            Object value = json.value();
            json.skipSpace();
            if (json.at != text.length()) throw json.error("trailing characters");
            return value;
        }

        private Object value() {
            skipSpace();
            if (at >= text.length()) throw error("unexpected end");
            char c = text.charAt(at);
            return switch (c) {
                case '{' -> object();
                case '[' -> array();
                case '"' -> string();
                case 't' -> literal("true", Boolean.TRUE);
                case 'f' -> literal("false", Boolean.FALSE);
                case 'n' -> literal("null", null);
                default -> number();
            };
        }

        private Map<String, Object> object() {
            Map<String, Object> result = new LinkedHashMap<>();
            at++;
            skipSpace();
            if (peek() == '}') { at++; return result; }
            for (;;) {
                skipSpace();
                if (peek() != '"') throw error("expected a key");
                String key = string();
                skipSpace();
                expect(':');
                result.put(key, value());
                skipSpace();
                char c = next();
                if (c == '}') return result;
                if (c != ',') throw error("expected , or }");
            }
        }

        private List<Object> array() {
            List<Object> result = new ArrayList<>();
            at++;
            skipSpace();
            if (peek() == ']') { at++; return result; }
            for (;;) {
                result.add(value());
                skipSpace();
                char c = next();
                if (c == ']') return result;
                if (c != ',') throw error("expected , or ]");
            }
        }

        private String string() {
            expect('"');
            StringBuilder result = new StringBuilder();
            for (;;) {
                char c = next();
                if (c == '"') return result.toString();
                if (c != '\\') { result.append(c); continue; }
                char escaped = next();
                switch (escaped) {
                    case '"', '\\', '/' -> result.append(escaped);
                    case 'b' -> result.append('\b');
                    case 'f' -> result.append('\f');
                    case 'n' -> result.append('\n');
                    case 'r' -> result.append('\r');
                    case 't' -> result.append('\t');
                    case 'u' -> {
                        if (at + 4 > text.length()) throw error("bad \\u escape");
                        result.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> throw error("bad escape");
                }
            }
        }

        private Object number() {
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
            String token = text.substring(start, at);
            if (token.isEmpty()) throw error("unexpected character");
            try {
                if (token.matches("-?\\d+")) return Long.parseLong(token);
                return Double.parseDouble(token);
            } catch (NumberFormatException e) {
                throw error("bad number " + token);
            }
        }

        private Object literal(String word, Object value) {
            if (!text.startsWith(word, at)) throw error("unexpected token");
            at += word.length();
            return value;
        }

        private void skipSpace() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
        }

        private char peek() {
            if (at >= text.length()) throw error("unexpected end");
            return text.charAt(at);
        }

        private char next() {
            char c = peek();
            at++;
            return c;
        }

        private void expect(char c) {
            if (next() != c) throw error("expected " + c);
        }

        private IllegalArgumentException error(String message) {
            return new IllegalArgumentException(message + " at " + at);
        }

        static String write(Object value) {
            StringBuilder result = new StringBuilder();
            write(result, value);
            return result.toString();
        }

        private static void write(StringBuilder b, Object value) {
            if (value == null) b.append("null");
            else if (value instanceof String s) quote(b, s);
            else if (value instanceof Boolean || value instanceof Integer || value instanceof Long) b.append(value);
            else if (value instanceof Number n) {
                double d = n.doubleValue();
                b.append(Double.isFinite(d) ? String.valueOf(d) : "null");
            } else if (value instanceof Map<?, ?> m) {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> entry : m.entrySet()) {
                    if (!first) b.append(',');
                    first = false;
                    quote(b, String.valueOf(entry.getKey()));
                    b.append(':');
                    write(b, entry.getValue());
                }
                b.append('}');
            } else if (value instanceof Collection<?> c) {
                b.append('[');
                boolean first = true;
                for (Object item : c) {
                    if (!first) b.append(',');
                    first = false;
                    write(b, item);
                }
                b.append(']');
            } else quote(b, String.valueOf(value));
        }

        private static void quote(StringBuilder b, String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    case '\r' -> b.append("\\r");
                    case '\t' -> b.append("\\t");
                    default -> {
                        if (c < 0x20 || c == '\u2028' || c == '\u2029') b.append(String.format("\\u%04x", (int) c));
                        else b.append(c);
                    }
                }
            }
            b.append('"');
        }
    }
}
