package io.lockstep;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

class ArchitectureTests {

	private static final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("io.lockstep");

	@Test
	void coreNeverDependsOnSpringBoot() {
		noClasses().should().dependOnClassesThat().resideInAPackage("org.springframework.boot..").check(classes);
	}

	@Test
	void packagesHaveNoCycles() {
		slices().matching("io.lockstep.(**)").should().beFreeOfCycles().allowEmptyShould(true).check(classes);
	}

	@Test
	void coreNeverWritesToStandardOutput() {
		noClasses().should()
			.accessField(System.class, "out")
			.orShould()
			.accessField(System.class, "err")
			.because("library code logs through SLF4J")
			.check(classes);
	}

}
