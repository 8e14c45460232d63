package io.lockstep.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * A TLS front for a plain {@code redis-server} (whose binary may be built without TLS):
 * it accepts TLS on a free 127.0.0.1 port with the key of a PKCS12 key store and relays
 * the decrypted bytes to the server. It counts the handshakes completed; {@link #close()}
 * closes every socket it opened.
 */
final class TlsProxy implements AutoCloseable {

	private final ServerSocket server;

	private final int target;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final AtomicInteger handshakes = new AtomicInteger();

	TlsProxy(Path keyStore, char[] password, int target) throws Exception {
		KeyStore store = KeyStore.getInstance("PKCS12");
		try (InputStream in = Files.newInputStream(keyStore)) {
			store.load(in, password);
		}
		KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
		keys.init(store, password);
		SSLContext context = SSLContext.getInstance("TLS");
		context.init(keys.getKeyManagers(), null, null);
		SSLServerSocket socket = (SSLServerSocket) context.getServerSocketFactory().createServerSocket();
		socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
		this.server = socket;
		this.target = target;
		Thread acceptor = new Thread(this::accept, "tls-proxy-accept");
		acceptor.setDaemon(true);
		acceptor.start();
	}

	int port() {
		return this.server.getLocalPort();
	}

	int handshakes() {
		return this.handshakes.get();
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				SSLSocket client = (SSLSocket) this.server.accept();
				this.sockets.add(client);
				Thread relay = new Thread(() -> relay(client), "tls-proxy-relay");
				relay.setDaemon(true);
				relay.start();
			}
			catch (Throwable ex) {
				// closed, or a failed accept: the next loop decides
			}
		}
	}

	private void relay(SSLSocket client) {
		try {
			client.startHandshake();
			this.handshakes.incrementAndGet();
			Socket redis = new Socket(InetAddress.getLoopbackAddress(), this.target);
			this.sockets.add(redis);
			Thread back = new Thread(() -> pump(redis, client), "tls-proxy-back");
			back.setDaemon(true);
			back.start();
			pump(client, redis);
		}
		catch (Throwable ex) {
			closeQuietly(client);
		}
	}

	private void pump(Socket from, Socket to) {
		byte[] buffer = new byte[8192];
		try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
			for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
				out.write(buffer, 0, read);
				out.flush();
			}
		}
		catch (Throwable ex) {
			// one side closed
		}
		finally {
			closeQuietly(from);
			closeQuietly(to);
		}
	}

	@Override
	public void close() {
		closeQuietly(this.server);
		this.sockets.forEach(TlsProxy::closeQuietly);
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// closing anyway
		}
	}

}
