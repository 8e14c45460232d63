package io.lockstep.sample;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's own settings are {@code sample.*}, described in the configuration metadata
 * an IDE reads, and none of them hides under Lockstep's {@code lockstep.*}.
 */
class SamplePropertiesMetadataTests {

	@Test
	void theSamplesOwnPropertiesAreDescribedInTheMetadata() throws IOException {
		List<Map<String, Object>> properties = new ArrayList<>();
		for (URL url : Collections
			.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = url.openStream()) {
				properties
					.addAll(JsonPath.read(new String(in.readAllBytes(), StandardCharsets.UTF_8), "$.properties[*]"));
			}
		}
		List<Map<String, Object>> sample = properties.stream()
			.filter((property) -> property.get("name").toString().startsWith("sample."))
			.toList();
		assertThat(sample).extracting((property) -> property.get("name"))
			.containsExactlyInAnyOrder("sample.embedded-redis", "sample.processing-time", "sample.report-interval",
					"sample.report-initial-delay", "sample.report-min-hold");
		assertThat(sample).allSatisfy(
				(property) -> assertThat(property.get("description")).as("description of %s", property.get("name"))
					.asString()
					.isNotBlank());
		assertThat(properties).extracting((property) -> property.get("name").toString())
			.noneMatch((name) -> name.startsWith("lockstep.sample"));
	}

	@Test
	void everySettingOfTheApplicationYmlIsKnownToTheMetadata() throws IOException {
		var sources = new YamlPropertySourceLoader().load("application.yml", new ClassPathResource("application.yml"));
		List<String> names = new ArrayList<>();
		sources.forEach((source) -> names.addAll(List.of(((EnumerablePropertySource<?>) source).getPropertyNames())));
		assertThat(names).filteredOn((name) -> name.startsWith("sample.") || name.startsWith("lockstep.sample"))
			.isNotEmpty()
			.allMatch((name) -> name.startsWith("sample."));
	}

}
