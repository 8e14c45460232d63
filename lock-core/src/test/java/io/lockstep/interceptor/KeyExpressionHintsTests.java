package io.lockstep.interceptor;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reflection hints of key expressions: exactly the members SpEL reads, followed
 * through chains, indexes, projections, selections and generic types.
 */
class KeyExpressionHintsTests {

	private static final ReflectionHintsPredicates reflection = RuntimeHintsPredicates.reflection();

	private final Method ship = ReflectionUtils.findMethod(Orders.class, "ship", Order.class, String.class, Box.class);

	@Test
	void propertiesReadOnParametersAreRegisteredAsTheGettersSpelCalls() {
		RuntimeHints hints = hints("#order.id + ':' + #p0.customer.name + ':' + #a1");
		assertThat(hints).matches(reflection.onMethodInvocation(Order.class, "id"))
			.matches(reflection.onMethodInvocation(Order.class, "customer"))
			.matches(reflection.onMethodInvocation(Customer.class, "getName"))
			.matches(reflection.onMethodInvocation(Customer.class, "getEmail").negate())
			.matches(reflection.onMethodInvocation(Customer.class, "isVip").negate());
	}

	@Test
	void booleanGettersPublicFieldsAndMethodsAreRegistered() throws NoSuchMethodException {
		RuntimeHints hints = hints("#order.customer.vip ? #order.lines[0].sku.toUpperCase() : 'x'");
		assertThat(hints).matches(reflection.onMethodInvocation(Customer.class, "isVip"))
			.matches(reflection.onMethodInvocation(Order.class, "lines"))
			.matches(reflection.onFieldAccess(Line.class, "sku"))
			.matches(reflection.onMethodInvocation(String.class.getMethod("toUpperCase")));
	}

	@Test
	void projectionsAndSelectionsReadTheElementType() {
		RuntimeHints hints = hints("#order.lines.?[quantity > 1].![sku]");
		assertThat(hints).matches(reflection.onMethodInvocation(Line.class, "getQuantity"))
			.matches(reflection.onFieldAccess(Line.class, "sku"));
		assertThat(hints("#order.bySku.![value.quantity]"))
			.matches(reflection.onMethodInvocation(Map.Entry.class, "getValue"))
			.matches(reflection.onMethodInvocation(Line.class, "getQuantity"));
	}

	@Test
	void indexesFollowArraysMapsAndNamedProperties() {
		assertThat(hints("#order.array[0].quantity + #order.bySku['a'].quantity"))
			.matches(reflection.onMethodInvocation(Order.class, "array"))
			.matches(reflection.onMethodInvocation(Order.class, "bySku"))
			.matches(reflection.onMethodInvocation(Line.class, "getQuantity"));
		assertThat(hints("#order['customer']['email']")).matches(reflection.onMethodInvocation(Order.class, "customer"))
			.matches(reflection.onMethodInvocation(Customer.class, "getEmail"));
	}

	@Test
	void genericTypesAreResolvedFromTheDeclaration() {
		assertThat(hints("#box.content.customer.email")).matches(reflection.onMethodInvocation(Box.class, "getContent"))
			.matches(reflection.onMethodInvocation(Order.class, "customer"))
			.matches(reflection.onMethodInvocation(Customer.class, "getEmail"));
	}

	@Test
	void theRootObjectAndBeansAreRegisteredToo() {
		RuntimeHints hints = hints("#root.methodName + #root.method.name + @keys.forOrder(#order.id)");
		assertThat(hints).matches(reflection.onMethodInvocation(LockExpressionRoot.class, "getMethodName"))
			.matches(reflection.onMethodInvocation(LockExpressionRoot.class, "getMethod"))
			.matches(reflection.onMethodInvocation(Method.class, "getName"))
			.matches(reflection.onMethodInvocation(Keys.class, "forOrder"))
			.matches(reflection.onMethodInvocation(Order.class, "id"));
		assertThat(hints("methodName"))
			.matches(reflection.onMethodInvocation(LockExpressionRoot.class, "getMethodName"));
	}

	@Test
	void everyMemberTheExpressionsReadIsRegistered() {
		// evaluates each expression, so none of the above is an expression SpEL would not
		// run
		Order order = new Order("o-1", new Customer("ann", "ann@example.com", true), List.of(new Line("a", 2)),
				Map.of("a", new Line("a", 2)), new Line[] { new Line("b", 1) });
		LockKeyExpressions expressions = new LockKeyExpressions();
		for (String expression : List.of("#order.id + ':' + #p0.customer.name + ':' + #a1",
				"#order.customer.vip ? #order.lines[0].sku.toUpperCase() : 'x'", "#order.lines.?[quantity > 1].![sku]",
				"#order.bySku.![value.quantity]", "#order.array[0].quantity + #order.bySku['a'].quantity",
				"#order['customer']['email']", "#box.content.customer.email")) {
			Object value = expressions.evaluate(expressions.parse(expression, this.ship, Orders.class), this.ship,
					new Object[] { order, "eu", new Box<>(order) }, new Orders(), Orders.class);
			assertThat(value).as(expression).isNotNull();
		}
	}

	private RuntimeHints hints(String expression) {
		RuntimeHints hints = new RuntimeHints();
		SpelExpression parsed = (SpelExpression) new LockKeyExpressions().parse(expression, this.ship, Orders.class);
		KeyExpressionHints.register(hints.reflection(), parsed.getAST(), this.ship, Orders.class,
				(name) -> name.equals("keys") ? Keys.class : null);
		return hints;
	}

	static class Orders {

		public String ship(Order order, String region, Box<Order> box) {
			return order.id() + region + box;
		}

	}

	public record Order(String id, Customer customer, List<Line> lines, Map<String, Line> bySku, Line[] array) {
	}

	public static class Customer {

		private final String name;

		private final String email;

		private final boolean vip;

		Customer(String name, String email, boolean vip) {
			this.name = name;
			this.email = email;
			this.vip = vip;
		}

		public String getName() {
			return this.name;
		}

		public String getEmail() {
			return this.email;
		}

		public boolean isVip() {
			return this.vip;
		}

	}

	public static class Line {

		public final String sku;

		private final int quantity;

		Line(String sku, int quantity) {
			this.sku = sku;
			this.quantity = quantity;
		}

		public int getQuantity() {
			return this.quantity;
		}

	}

	public static class Box<T> {

		private final T content;

		Box(T content) {
			this.content = content;
		}

		public T getContent() {
			return this.content;
		}

	}

	public static class Keys {

		public String forOrder(String id) {
			return "order:" + id;
		}

	}

}
