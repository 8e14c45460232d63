package io.lockstep.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on {@code 127.0.0.1} between a client and one Redis node, whose behaviour a
 * test switches at any time: {@link #pass()} forwards bytes, {@link #blackhole()} accepts
 * and reads but drops every byte in both directions (connections stay open, as behind a
 * dead link), {@link #delay(long)} forwards every chunk that many milliseconds after it
 * arrived (a slow network), {@link #holdCommandReplies()} holds back the replies on every
 * connection but the subscribers' (a command connection stalled while pub/sub messages
 * still arrive) until another mode is set, and {@link #reset()} closes every connection
 * with a TCP reset and resets new ones until another mode is set. Plain threads, two per
 * direction of each connection; {@link #close()} closes every socket and ends every
 * thread.
 */
public final class ChaosProxy implements AutoCloseable {

	private static final byte[] CLOSE = new byte[0];

	private final ServerSocket server;

	private final InetSocketAddress target;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final List<Thread> threads = new CopyOnWriteArrayList<>();

	private final AtomicLong dropped = new AtomicLong();

	private final AtomicLong held = new AtomicLong();

	private volatile Mode mode = new Mode(Kind.PASS, 0);

	private volatile boolean closed;

	private ChaosProxy(int targetPort) throws IOException {
		this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		start("chaos-proxy-accept-" + this.server.getLocalPort(), this::acceptLoop);
	}

	/** A proxy in {@code pass} mode in front of the node. */
	public static ChaosProxy to(RedisNode node) {
		return to(node.port());
	}

	/** A proxy in {@code pass} mode in front of {@code 127.0.0.1:targetPort}. */
	public static ChaosProxy to(int targetPort) {
		try {
			return new ChaosProxy(targetPort);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot open a proxy port on 127.0.0.1", ex);
		}
	}

	/** The port clients connect to instead of the node's. */
	public int port() {
		return this.server.getLocalPort();
	}

	/** Always {@code 127.0.0.1}. */
	public String host() {
		return "127.0.0.1";
	}

	/** Forwards bytes as they come. */
	public ChaosProxy pass() {
		this.mode = new Mode(Kind.PASS, 0);
		return this;
	}

	/** Drops every byte in both directions; connections stay open. */
	public ChaosProxy blackhole() {
		this.mode = new Mode(Kind.BLACKHOLE, 0);
		return this;
	}

	/** Forwards every chunk {@code millis} after it arrived, in each direction. */
	public ChaosProxy delay(long millis) {
		if (millis < 0) {
			throw new IllegalArgumentException("'millis' must not be negative, got " + millis);
		}
		this.mode = new Mode(Kind.DELAY, millis);
		return this;
	}

	/**
	 * Holds back what Redis sends on every connection that has not sent a
	 * {@code SUBSCRIBE} (or {@code SSUBSCRIBE}, {@code PSUBSCRIBE}): the commands still
	 * reach Redis and run, but their replies wait, in order, until another mode is set;
	 * the messages of subscribed connections pass.
	 */
	public ChaosProxy holdCommandReplies() {
		this.mode = new Mode(Kind.HOLD_COMMAND_REPLIES, 0);
		return this;
	}

	/**
	 * Replies (chunks read from Redis) held back by {@link #holdCommandReplies()} so far.
	 */
	public long heldReplies() {
		return this.held.get();
	}

	/**
	 * Resets every open connection (RST) and every new one until another mode is set.
	 */
	public ChaosProxy reset() {
		this.mode = new Mode(Kind.RESET, 0);
		for (Socket socket : this.sockets) {
			abort(socket);
		}
		return this;
	}

	/** Bytes dropped by {@link #blackhole()} so far. */
	public long droppedBytes() {
		return this.dropped.get();
	}

	@Override
	public void close() {
		this.closed = true;
		closeQuietly(this.server);
		for (Socket socket : this.sockets) {
			closeQuietly(socket);
		}
		for (Thread thread : this.threads) {
			thread.interrupt();
		}
		for (Thread thread : this.threads) {
			try {
				thread.join(TimeUnit.SECONDS.toMillis(5));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	@Override
	public String toString() {
		return "proxy 127.0.0.1:" + port() + " -> " + this.target.getPort() + " (" + this.mode + ")";
	}

	private void acceptLoop() {
		while (!this.closed) {
			Socket client;
			try {
				client = this.server.accept();
			}
			catch (IOException ex) {
				return; // closed
			}
			if (this.mode.kind == Kind.RESET) {
				abort(client);
				continue;
			}
			Socket upstream = new Socket();
			try {
				upstream.connect(this.target, 2_000);
			}
			catch (IOException ex) {
				abort(client);
				closeQuietly(upstream);
				continue;
			}
			this.sockets.add(client);
			this.sockets.add(upstream);
			int id = client.getPort();
			AtomicBoolean subscriber = new AtomicBoolean();
			pipe("chaos-proxy-up-" + id, client, upstream, subscriber, true);
			pipe("chaos-proxy-down-" + id, upstream, client, subscriber, false);
		}
	}

	/**
	 * One direction of a connection: a reader stamping chunks with their arrival time,
	 * and a writer that forwards each one when due.
	 * @param subscriber set once the client sent a subscribe command on this connection
	 * @param up whether this is the client-to-Redis direction
	 */
	private void pipe(String name, Socket from, Socket to, AtomicBoolean subscriber, boolean up) {
		BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
		start(name + "-read", () -> {
			byte[] buffer = new byte[16 * 1024];
			try (InputStream in = from.getInputStream()) {
				int read;
				while ((read = in.read(buffer)) >= 0) {
					if (this.mode.kind == Kind.BLACKHOLE) {
						this.dropped.addAndGet(read);
					}
					else {
						byte[] bytes = Arrays.copyOf(buffer, read);
						if (up && !subscriber.get()
								&& new String(bytes, StandardCharsets.ISO_8859_1).toUpperCase(Locale.ROOT)
									.contains("SUBSCRIBE")) {
							subscriber.set(true);
						}
						queue.add(new Chunk(bytes, System.nanoTime()));
					}
				}
			}
			catch (IOException ex) {
				// closed or reset
			}
			queue.add(new Chunk(CLOSE, 0));
		});
		start(name + "-write", () -> {
			try (OutputStream out = to.getOutputStream()) {
				while (true) {
					Chunk chunk = queue.take();
					if (chunk.bytes == CLOSE) {
						break;
					}
					Mode current = this.mode;
					if (!up && current.kind == Kind.HOLD_COMMAND_REPLIES && !subscriber.get()) {
						this.held.incrementAndGet();
						while (this.mode.kind == Kind.HOLD_COMMAND_REPLIES && !this.closed) {
							TimeUnit.MILLISECONDS.sleep(1);
						}
						current = this.mode;
					}
					if (current.kind == Kind.RESET) {
						// the connection is being reset: nothing more passes, not even a
						// reply held until the reset
						break;
					}
					if (current.kind == Kind.BLACKHOLE) {
						this.dropped.addAndGet(chunk.bytes.length);
						continue;
					}
					if (current.kind == Kind.DELAY) {
						long wait = chunk.arrivedNanos + TimeUnit.MILLISECONDS.toNanos(current.millis)
								- System.nanoTime();
						if (wait > 0) {
							TimeUnit.NANOSECONDS.sleep(wait);
						}
					}
					out.write(chunk.bytes);
					out.flush();
				}
			}
			catch (IOException | InterruptedException ex) {
				// closed, reset, or the proxy is closing
			}
			finally {
				closeQuietly(from);
				closeQuietly(to);
				this.sockets.remove(from);
				this.sockets.remove(to);
			}
		});
	}

	private void start(String name, Runnable body) {
		Thread thread = new Thread(() -> {
			try {
				body.run();
			}
			finally {
				this.threads.remove(Thread.currentThread());
			}
		}, name);
		thread.setDaemon(true);
		this.threads.add(thread);
		thread.start();
	}

	private static void abort(Socket socket) {
		try {
			socket.setSoLinger(true, 0);
		}
		catch (SocketException ex) {
			// already closed
		}
		closeQuietly(socket);
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// nothing left to do
		}
	}

	private enum Kind {

		PASS, BLACKHOLE, DELAY, RESET, HOLD_COMMAND_REPLIES

	}

	private record Mode(Kind kind, long millis) {

		@Override
		public String toString() {
			return (this.kind == Kind.DELAY) ? "delay " + this.millis + "ms"
					: this.kind.name().toLowerCase(Locale.ROOT).replace('_', ' ');
		}

	}

	private record Chunk(byte[] bytes, long arrivedNanos) {

	}

}
