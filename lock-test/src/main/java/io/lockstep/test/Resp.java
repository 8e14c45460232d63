package io.lockstep.test;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal RESP2 client for the fixture's own checks and for tests: one command per
 * connection, bounded by a timeout. Replies map to {@code String}, {@code Long},
 * {@code List<Object>} or {@code null}; an error reply becomes a
 * {@link RedisReplyException}.
 */
final class Resp {

	private Resp() {
	}

	static Object call(String host, int port, Duration timeout, String... args) throws IOException {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
			socket.setSoTimeout((int) timeout.toMillis());
			OutputStream out = socket.getOutputStream();
			out.write(encode(args));
			out.flush();
			return read(new BufferedInputStream(socket.getInputStream()));
		}
	}

	static byte[] encode(String... args) {
		ByteArrayOutputStream buffer = new ByteArrayOutputStream();
		writeLine(buffer, "*" + args.length);
		for (String arg : args) {
			byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
			writeLine(buffer, "$" + bytes.length);
			buffer.writeBytes(bytes);
			writeLine(buffer, "");
		}
		return buffer.toByteArray();
	}

	private static void writeLine(ByteArrayOutputStream buffer, String line) {
		buffer.writeBytes(line.getBytes(StandardCharsets.UTF_8));
		buffer.write('\r');
		buffer.write('\n');
	}

	static Object read(InputStream in) throws IOException {
		int type = in.read();
		if (type == -1) {
			throw new IOException("Connection closed by Redis");
		}
		String line = readLine(in);
		switch (type) {
			case '+':
				return line;
			case '-':
				throw new RedisReplyException(line);
			case ':':
				return Long.parseLong(line);
			case '$': {
				int length = Integer.parseInt(line);
				if (length < 0) {
					return null;
				}
				byte[] bytes = in.readNBytes(length + 2);
				return new String(bytes, 0, length, StandardCharsets.UTF_8);
			}
			case '*': {
				int count = Integer.parseInt(line);
				if (count < 0) {
					return null;
				}
				List<Object> items = new ArrayList<>(count);
				for (int i = 0; i < count; i++) {
					items.add(read(in));
				}
				return items;
			}
			default:
				throw new IOException("Unexpected RESP type '" + (char) type + "'");
		}
	}

	private static String readLine(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		int previous = -1;
		while (true) {
			int b = in.read();
			if (b == -1) {
				throw new IOException("Connection closed by Redis");
			}
			if (previous == '\r' && b == '\n') {
				byte[] bytes = line.toByteArray();
				return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
			}
			line.write(b);
			previous = b;
		}
	}

}
