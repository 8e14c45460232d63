package io.lockstep.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every {@code curl} line of the README's "Try the sample app" section against the
 * running app, exactly as printed but for the port: with {@code curl} when it is
 * installed, else by sending the same request from Java.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "sample.report-interval=1h" })
class ReadmeCurlTests extends RealRedis {

	@LocalServerPort
	private int port;

	@Test
	void everyCurlLineOfTheReadmeWorks() throws Exception {
		List<String> lines = curlLines();
		assertThat(lines).hasSizeGreaterThanOrEqualTo(5);
		boolean realCurl = Files.isExecutable(Path.of("/usr/bin/curl"));
		for (String line : lines) {
			String command = line.replace("localhost:8080", "127.0.0.1:" + this.port);
			Result result = realCurl ? curl(command) : emulate(command);
			System.out.printf("%s -> %d, %d bytes%n", line, result.status(), result.body().length());
			assertThat(result.status()).as(line).isBetween(200, 299);
			assertThat(result.body()).as(line).isNotBlank();
		}
	}

	private static List<String> curlLines() throws IOException {
		List<String> readme = Files.readAllLines(Path.of("..", "README.md"), StandardCharsets.UTF_8);
		int start = readme.indexOf("## Try the sample app");
		assertThat(start).as("README has a '## Try the sample app' section").isNotNegative();
		List<String> lines = new ArrayList<>();
		for (String line : readme.subList(start + 1, readme.size())) {
			if (line.startsWith("## ")) {
				break;
			}
			if (line.startsWith("curl ")) {
				lines.add(line);
			}
		}
		return lines;
	}

	private record Result(int status, String body) {
	}

	private static Result curl(String command) throws Exception {
		List<String> args = words(command);
		args.add(1, "-w");
		args.add(2, "\n%{http_code}");
		Process process = new ProcessBuilder(args).redirectError(ProcessBuilder.Redirect.INHERIT)
			.redirectOutput(ProcessBuilder.Redirect.PIPE)
			.start();
		String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		int split = out.lastIndexOf('\n');
		return new Result(Integer.parseInt(out.substring(split + 1).trim()), out.substring(0, Math.max(0, split)));
	}

	/**
	 * Sends the request a curl line describes ({@code -s}, {@code -X}, {@code -H},
	 * {@code -d}).
	 */
	private static Result emulate(String command) throws Exception {
		List<String> args = words(command);
		String method = "GET";
		String data = null;
		String url = null;
		HttpRequest.Builder request = HttpRequest.newBuilder();
		for (int i = 1; i < args.size(); i++) {
			switch (args.get(i)) {
				case "-s" -> {
				}
				case "-X" -> method = args.get(++i);
				case "-H" -> {
					String header = args.get(++i);
					request.header(header.substring(0, header.indexOf(':')).trim(),
							header.substring(header.indexOf(':') + 1).trim());
				}
				case "-d" -> {
					data = args.get(++i);
					method = method.equals("GET") ? "POST" : method;
				}
				default -> url = args.get(i);
			}
		}
		request.uri(URI.create(url))
			.method(method,
					(data != null) ? HttpRequest.BodyPublishers.ofString(data) : HttpRequest.BodyPublishers.noBody());
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(request.build(), HttpResponse.BodyHandlers.ofString());
		return new Result(response.statusCode(), response.body());
	}

	/** Splits a command line into words, honouring single quotes. */
	private static List<String> words(String command) {
		List<String> words = new ArrayList<>();
		StringBuilder word = new StringBuilder();
		boolean quoted = false;
		boolean inWord = false;
		for (char c : command.toCharArray()) {
			if (c == '\'') {
				quoted = !quoted;
				inWord = true;
			}
			else if (c == ' ' && !quoted) {
				if (inWord) {
					words.add(word.toString());
					word.setLength(0);
					inWord = false;
				}
			}
			else {
				word.append(c);
				inWord = true;
			}
		}
		if (inWord) {
			words.add(word.toString());
		}
		return words;
	}

}
