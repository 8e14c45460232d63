package io.lockstep.autoconfigure;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The build's promises to users of the published artifacts, read from the poms: the
 * {@code lockstep-bom} manages every published jar (and nothing of Spring Boot's, so
 * importing it pins no one else's versions), at the project's version, and every
 * published jar has a stable {@code Automatic-Module-Name} under {@code io.lockstep}.
 */
class PublishedArtifactsTests {

	private static final File ROOT = new File("..");

	@Test
	void theBomManagesEveryPublishedJarAtTheProjectVersion() throws Exception {
		Document parent = read(new File(ROOT, "pom.xml"));
		Document bom = read(new File(ROOT, "lock-bom/pom.xml"));
		assertThat(child(bom.getDocumentElement(), "parent")).as("the BOM has no parent").isNull();
		assertThat(text(bom.getDocumentElement(), "version")).isEqualTo(text(parent.getDocumentElement(), "version"));
		List<String> managed = new ArrayList<>();
		NodeList dependencies = bom.getElementsByTagName("dependency");
		for (int i = 0; i < dependencies.getLength(); i++) {
			Element dependency = (Element) dependencies.item(i);
			assertThat(text(dependency, "groupId")).isEqualTo("io.lockstep");
			assertThat(text(dependency, "version")).isEqualTo("${project.version}");
			managed.add(text(dependency, "artifactId"));
		}
		assertThat(managed).containsExactlyInAnyOrderElementsOf(publishedJars(parent).keySet());
	}

	@Test
	void everyPublishedJarHasAStableModuleName() throws Exception {
		Map<String, String> names = new TreeMap<>();
		publishedJars(read(new File(ROOT, "pom.xml"))).forEach((artifactId, pom) -> {
			NodeList entries = pom.getElementsByTagName("Automatic-Module-Name");
			assertThat(entries.getLength()).as("Automatic-Module-Name of %s", artifactId).isOne();
			names.put(artifactId, entries.item(0).getTextContent().trim());
		});
		assertThat(names.values()).allMatch((name) -> name.matches("io\\.lockstep(\\.[a-z]+)+"))
			.doesNotHaveDuplicates();
		assertThat(names).containsEntry("lockstep-core", "io.lockstep.core")
			.containsEntry("lockstep-spring-boot-autoconfigure", "io.lockstep.autoconfigure")
			.containsEntry("lockstep-spring-integration", "io.lockstep.integration")
			.containsEntry("lockstep-shedlock", "io.lockstep.shedlock");
	}

	/** The modules of the default build that install a jar, by artifactId. */
	private static Map<String, Document> publishedJars(Document parent) throws Exception {
		Map<String, Document> jars = new TreeMap<>();
		Element modules = child(parent.getDocumentElement(), "modules");
		NodeList list = modules.getElementsByTagName("module");
		for (int i = 0; i < list.getLength(); i++) {
			Document pom = read(new File(ROOT, list.item(i).getTextContent().trim() + "/pom.xml"));
			Element project = pom.getDocumentElement();
			String packaging = text(project, "packaging");
			Element properties = child(project, "properties");
			boolean skipped = properties != null && "true".equals(text(properties, "maven.install.skip"));
			if (!skipped && (packaging == null || packaging.equals("jar"))) {
				jars.put(text(project, "artifactId"), pom);
			}
		}
		return jars;
	}

	private static Document read(File file) throws Exception {
		return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file);
	}

	private static Element child(Element parent, String name) {
		for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
			if (node instanceof Element element && element.getTagName().equals(name)) {
				return element;
			}
		}
		return null;
	}

	private static String text(Element parent, String name) {
		Element child = child(parent, name);
		return (child != null) ? child.getTextContent().trim() : null;
	}

}
