package io.lockstep.internal.engine;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Owner tokens: 128 bits from a {@link SecureRandom}, fresh for every acquisition. The
 * token is the only thing that lets a client renew or release a lock.
 */
final class OwnerTokens {

	private static final SecureRandom random = secureRandom();

	private static final HexFormat hex = HexFormat.of();

	private static final int TOKEN_BYTES = 16;

	private static final int BATCH = 64;

	/** Random bytes for the next tokens; guarded by itself. */
	private static final byte[] batch = new byte[TOKEN_BYTES * BATCH];

	/** Tokens taken from {@link #batch}; guarded by {@link #batch}. */
	private static int taken = BATCH;

	private OwnerTokens() {
	}

	/**
	 * Seeds the generator now (this class's initialization), on the thread that builds an
	 * engine at start-up, not on a first caller's, which may be a non-blocking thread.
	 */
	static void seed() {
		// the static generator above is seeded once the class is initialized
	}

	/** A new 128-bit random owner token, in hex. */
	static String next() {
		return hex.formatHex(nextToken());
	}

	/**
	 * 16 bytes of the generator, drawn {@value #BATCH} tokens at a time: one call of the
	 * generator (and one turn of its monitor) per {@value #BATCH} tokens instead of per
	 * token — each call costs the DRBG two hashes beyond those of its output. A token's
	 * bytes are cleared from the batch once taken.
	 */
	private static byte[] nextToken() {
		byte[] token = new byte[TOKEN_BYTES];
		synchronized (batch) {
			if (taken == BATCH) {
				random.nextBytes(batch);
				taken = 0;
			}
			int from = taken * TOKEN_BYTES;
			System.arraycopy(batch, from, token, 0, TOKEN_BYTES);
			Arrays.fill(batch, from, from + TOKEN_BYTES, (byte) 0);
			taken++;
		}
		return token;
	}

	/**
	 * A DRBG (NIST SP 800-90A), seeded once, here: it never reads {@code /dev/urandom}
	 * again, so a token is made without I/O, also on a non-blocking (reactive) thread.
	 */
	private static SecureRandom secureRandom() {
		SecureRandom random;
		try {
			random = SecureRandom.getInstance("DRBG");
		}
		catch (NoSuchAlgorithmException ex) {
			random = new SecureRandom();
		}
		// seeds it now (a DRBG seeds on first use)
		random.nextBytes(new byte[16]);
		return random;
	}

}
