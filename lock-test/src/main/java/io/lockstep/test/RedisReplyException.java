package io.lockstep.test;

/**
 * An error reply from Redis to a command sent through {@link RedisNode#call(String...)}.
 */
public class RedisReplyException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	RedisReplyException(String message) {
		super(message);
	}

}
