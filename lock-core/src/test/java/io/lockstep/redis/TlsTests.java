package io.lockstep.redis;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lockstep.LockException;
import io.lockstep.LockHandle;
import io.lockstep.internal.engine.Probes;
import io.lockstep.test.Eventually;
import io.lockstep.test.RedisFixture;
import io.lockstep.test.RedisNode;
import io.lockstep.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Lockstep over TLS ({@code rediss://}): with the server's CA trusted, locks, renewals
 * and release notifications work; with another CA, or without TLS, every call fails
 * clearly and nothing reaches Redis. Certificates are made for the test with
 * {@code openssl}. Where the {@code redis-server} was built without TLS, the test prints
 * a NOTE saying so.
 */
@RedisTest
class TlsTests {

	private Path dir;

	private final List<RedisClient> clients = new ArrayList<>();

	@BeforeEach
	void certificates() throws Exception {
		this.dir = Files.createTempDirectory("lockstep-tls-");
		openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
				"-subj", "/CN=Lockstep Test CA");
		openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key", "-out", "other-ca.crt",
				"-days", "2", "-subj", "/CN=Some Other CA");
		openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj",
				"/CN=127.0.0.1");
		Files.writeString(this.dir.resolve("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
		openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out",
				"server.crt", "-days", "2", "-extfile", "san.ext");
	}

	@AfterEach
	void cleanUp() throws IOException {
		this.clients.forEach(RedisClient::shutdown);
		try (var files = Files.list(this.dir)) {
			for (Path file : files.toList()) {
				Files.delete(file);
			}
		}
		Files.delete(this.dir);
	}

	@Test
	void locksWorkOverTlsAndAWrongCaOrPlaintextFailsClearly(RedisFixture fixture) throws Exception {
		scenario(fixture);
	}

	@Test
	void onTheEmbeddedRedis62(RedisFixture fixture) throws Exception {
		scenario(fixture.useEmbeddedRedis());
	}

	private void scenario(RedisFixture fixture) throws Exception {
		int tlsPort = freePort();
		RedisNode redis = startWithTls(fixture, tlsPort);
		if (redis == null) {
			return;
		}
		RedisClient trusted = client(tlsPort, true, "ca.crt");
		// the JVM's first TLS handshake (JSSE set up, cold code) may take longer than the
		// 300 ms command timeout below on a loaded machine: one connection with Lettuce's
		// own timeout (60 s) first
		try (var warmUp = trusted.connect()) {
			assertThat(warmUp.sync().ping()).isEqualTo("PONG");
		}
		try (RedisLockTemplate a = TestLocks.builder(trusted)
			.leaseTime(Duration.ofMillis(900))
			.commandTimeout(Duration.ofMillis(300))
			.build();
				RedisLockTemplate b = TestLocks.builder(client(tlsPort, true, "ca.crt"))
					.leaseTime(Duration.ofMillis(900))
					.commandTimeout(Duration.ofMillis(300))
					.build()) {
			// a hold past two leases (renewed over TLS), then a waiter woken by
			// notification
			LockHandle held = a.acquire("tls");
			CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
				try (LockHandle lock = b.withWaitTime(Duration.ofSeconds(10)).acquire("tls")) {
					return System.nanoTime();
				}
			});
			await().atMost(Duration.ofSeconds(5)).until(() -> Probes.engine(b).keysWaitedFor() == 1);
			Eventually.holds(Duration.ofMillis(2_000), () -> false);
			assertThat(held.isHeld()).isTrue();
			long released = System.nanoTime();
			held.close();
			long wokenMillis = (waiter.get(10, TimeUnit.SECONDS) - released) / 1_000_000;
			int overlaps = contend(a, b);
			long keys = (Long) redis.call("DBSIZE");
			System.out.printf("TLS (%s): held 2 s over a 900 ms lease, waiter woken %d ms after release "
					+ "(notifications %s), 800 contended acquisitions with %d overlaps, leases lost %d, keys left %d "
					+ "(the fencing counter)%n", fixture.redisVersion(), wokenMillis,
					Probes.engine(b).wakeUps().notifies() ? "on" : "off", overlaps, a.leasesLost() + b.leasesLost(),
					keys);
			assertThat(Probes.engine(b).wakeUps().notifies()).isTrue();
			assertThat(wokenMillis).isLessThan(250);
			assertThat(overlaps).isZero();
			assertThat(a.leasesLost() + b.leasesLost()).isZero();
			assertThat(keys).isEqualTo(1L);
		}
		redis.call("FLUSHALL");
		long scriptsBefore = TestLocks.commandCalls(redis, "evalsha") + TestLocks.commandCalls(redis, "eval");
		List<String> failures = new ArrayList<>();
		failures.add(failure(client(tlsPort, true, "other-ca.crt"), "wrong CA"));
		failures.add(failure(client(tlsPort, false, null), "plaintext to the TLS port"));
		failures.add(failure(client(redis.port(), true, "ca.crt"), "TLS to the plaintext port"));
		long keys = (Long) redis.call("DBSIZE");
		System.out.printf(
				"TLS: wrong CA -> %s; plaintext to the TLS port -> %s; TLS to the plaintext port -> %s; "
						+ "keys written %d, scripts run %d%n",
				failures.get(0), failures.get(1), failures.get(2), keys,
				TestLocks.commandCalls(redis, "evalsha") + TestLocks.commandCalls(redis, "eval") - scriptsBefore);
		// what a user reads in the log line, not only deep in the cause chain
		assertThat(failures.get(0)).contains("TLS").contains("certification path");
		assertThat(keys).isZero();
		assertThat(TestLocks.commandCalls(redis, "evalsha") + TestLocks.commandCalls(redis, "eval"))
			.isEqualTo(scriptsBefore);
	}

	/** Starts a node with a TLS port, or prints why this binary cannot. */
	private RedisNode startWithTls(RedisFixture fixture, int tlsPort) {
		try {
			return fixture.standalone("--tls-port", Integer.toString(tlsPort), "--tls-cert-file", file("server.crt"),
					"--tls-key-file", file("server.key"), "--tls-ca-cert-file", file("ca.crt"), "--tls-auth-clients",
					"no");
		}
		catch (IllegalStateException ex) {
			if (ex.getMessage().toLowerCase(Locale.ROOT).contains("tls")) {
				System.out.printf("NOTE: TLS NOT TESTED: %s was built without TLS support (%s)%n",
						fixture.redisVersion(), ex.getMessage().lines().reduce((first, last) -> last).orElse(""));
				return null;
			}
			throw ex;
		}
	}

	private static int contend(RedisLockTemplate a, RedisLockTemplate b) throws Exception {
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> workers = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				RedisLockTemplate template = (t % 2 == 0) ? a : b;
				workers.add(pool.submit(() -> {
					for (int i = 0; i < 200; i++) {
						template.withWaitTime(Duration.ofSeconds(30)).execute("tls:hot", (lock) -> {
							if (inside.incrementAndGet() != 1) {
								overlaps.incrementAndGet();
							}
							inside.decrementAndGet();
							return null;
						});
					}
				}));
			}
			for (Future<?> worker : workers) {
				worker.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			pool.shutdownNow();
		}
		return overlaps.get();
	}

	/** The message of the failure of a first lock call over this client. */
	private static String failure(RedisClient client, String what) {
		try (RedisLockTemplate locks = TestLocks.builder(client).commandTimeout(Duration.ofSeconds(2)).build()) {
			LockException failure = org.assertj.core.api.Assertions.catchThrowableOfType(LockException.class,
					() -> locks.tryAcquire("never"));
			assertThat(failure).as(what).isNotNull();
			return "'" + failure.getMessage() + "'";
		}
	}

	private RedisClient client(int port, boolean ssl, String trustedCa) {
		RedisClient client = RedisClient
			.create(RedisURI.builder().withHost("127.0.0.1").withPort(port).withSsl(ssl).build());
		if (trustedCa != null) {
			client.setOptions(ClientOptions.builder()
				.sslOptions(SslOptions.builder().jdkSslProvider().trustManager(new File(file(trustedCa))).build())
				.build());
		}
		this.clients.add(client);
		return client;
	}

	private String file(String name) {
		return this.dir.resolve(name).toString();
	}

	private void openssl(String... arguments) throws Exception {
		List<String> command = new ArrayList<>();
		command.add("openssl");
		command.addAll(List.of(arguments));
		Process process = new ProcessBuilder(command).directory(this.dir.toFile()).redirectErrorStream(true).start();
		String output = new String(process.getInputStream().readAllBytes());
		assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
		assertThat(process.exitValue()).as("openssl %s: %s", arguments[0], output).isZero();
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
			return socket.getLocalPort();
		}
	}

}
