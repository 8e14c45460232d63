package io.lockstep.interceptor;

import java.lang.reflect.Method;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class LockKeyExpressionsTests {

	private final LockKeyExpressions expressions = new LockKeyExpressions();

	private final Method place = ReflectionUtils.findMethod(Orders.class, "place", Order.class, String.class);

	@Test
	void evaluatesParametersByNameAndIndexAndTheRoot() {
		Order order = new Order("o-1", 3);
		assertThat(evaluate("#order.id + ':' + #p1 + ':' + #a0.quantity + ':' + #root.methodName", order, "eu"))
			.isEqualTo("o-1:eu:3:place");
		assertThat(evaluate("#root.method.name + '/' + #root.args.length", order, "eu")).isEqualTo("place/2");
	}

	@Test
	void argumentValuesAreNeverEvaluated() {
		assertThat(evaluate("#region", null, "T(java.lang.Runtime).getRuntime().exec('id')"))
			.isEqualTo("T(java.lang.Runtime).getRuntime().exec('id')");
	}

	@Test
	void parsingRejectsTypesConstructorsAssignmentsAndUnknownVariables() {
		assertThatIllegalArgumentException().isThrownBy(() -> parse("T(java.lang.System).exit(1)"))
			.withMessageContaining("type references");
		assertThatIllegalArgumentException().isThrownBy(() -> parse("new java.io.File('x')"))
			.withMessageContaining("constructors");
		assertThatIllegalArgumentException().isThrownBy(() -> parse("new int[100000000]"))
			.withMessageContaining("constructors");
		assertThatIllegalArgumentException().isThrownBy(() -> parse("#region = 'x'"))
			.withMessageContaining("assignments");
		assertThatIllegalArgumentException().isThrownBy(() -> parse("#regoin")).withMessageContaining("#regoin");
		assertThatIllegalArgumentException().isThrownBy(() -> parse("'a' + '" + "b".repeat(1024) + "'"))
			.withMessageContaining("over the limit");
	}

	@Test
	void parsingRejectsReflectionClassLoadingAndTheRuntime() {
		for (String expression : List.of("#order.getClass().forName('java.lang.Runtime')", "#order.class.classLoader",
				"#root.targetClass.classLoader", "#root.method.invoke(#root.target, #root.args)",
				"#root.method.declaringClass", "#order['class']", "#p1.getClass()")) {
			assertThatIllegalArgumentException().as(expression)
				.isThrownBy(() -> parse(expression))
				.withMessageContaining("leads into reflection");
		}
		// a property of the same name as a harmless getter of Class is still fine
		assertThat(evaluate("#order.id + #root.method.name", new Order("o-1", 3), "eu")).isEqualTo("o-1place");
	}

	@Test
	void evaluationCannotReachClassesEvenThroughADocumentedRootProperty() {
		Order order = new Order("o-1", 3);
		assertThatExceptionOfType(EvaluationException.class)
			.isThrownBy(() -> evaluate("#root.targetClass.simpleName", order, "eu"));
		assertThatExceptionOfType(EvaluationException.class)
			.isThrownBy(() -> evaluate("#root.method.returnType.name", order, "eu"));
	}

	@Test
	void projectionsAndSelectionsReadPropertiesOfTheElements() {
		Order order = new Order("o-1", 3);
		assertThat(evaluate("{#order}.?[quantity > 1].![id]", order, "eu")).isEqualTo(List.of("o-1"));
		assertThat(evaluate("{#order, #order}.![id + ':' + quantity]", order, "eu"))
			.isEqualTo(List.of("o-1:3", "o-1:3"));
	}

	@Test
	void expressionsAreParsedOncePerMethod() {
		assertThat(parse("#region")).isSameAs(parse("#region"));
	}

	private Expression parse(String expression) {
		return this.expressions.parse(expression, this.place, Orders.class);
	}

	private Object evaluate(String expression, Order order, String region) {
		return this.expressions.evaluate(parse(expression), this.place, new Object[] { order, region }, new Orders(),
				Orders.class);
	}

	record Order(String id, int quantity) {
	}

	static class Orders {

		void place(Order order, String region) {
		}

	}

}
