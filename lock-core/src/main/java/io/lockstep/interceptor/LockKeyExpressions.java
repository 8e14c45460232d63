package io.lockstep.interceptor;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.expression.spel.SpelMessage;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.OpDec;
import org.springframework.expression.spel.ast.OpInc;
import org.springframework.expression.spel.ast.Projection;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.Selection;
import org.springframework.expression.spel.ast.StringLiteral;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.support.DataBindingMethodResolver;
import org.springframework.expression.spel.support.DataBindingPropertyAccessor;

/**
 * Parses (once per method, cached) and evaluates key expressions. Parsing rejects type
 * references ({@code T(...)}), constructors, assignments, function calls, variables that
 * are not parameters, members that lead into reflection, class loading or the runtime
 * ({@code getClass()}, {@code .class}, {@code forName}, {@code invoke}, {@code exec},
 * ...), members that a type fixing its members cannot have ({@code #sku.nosuch} on a
 * {@code String}, see {@link KeyExpressionHints#checkMembers}) and expressions over
 * {@value #MAX_LENGTH} characters. Evaluation sees the parameters ({@code #name},
 * {@code #p0}, {@code #a0}), beans ({@code @name}) and the {@link LockExpressionRoot}; it
 * locates no types, calls no constructors, writes no properties, and calls no methods on
 * {@code Class} objects. The values of arguments are data, never parsed as expressions.
 */
final class LockKeyExpressions extends CachedExpressionEvaluator {

	static final int MAX_LENGTH = 1024;

	/** The properties of {@link LockExpressionRoot}, readable without a prefix. */
	private static final List<String> ROOT_PROPERTIES = List.of("method", "methodName", "args", "target",
			"targetClass");

	/**
	 * Methods and properties that a key has no use for and that lead into reflection,
	 * class loading or the runtime.
	 */
	private static final Set<String> REFLECTION = Set.of("getClass", "class", "forName", "getClassLoader",
			"classLoader", "loadClass", "invoke", "newInstance", "getMethod", "getMethods", "getDeclaredMethod",
			"getDeclaredMethods", "declaredMethods", "getField", "getFields", "getDeclaredField", "getDeclaredFields",
			"declaredFields", "getConstructor", "getConstructors", "getDeclaredConstructor", "getDeclaredConstructors",
			"declaredConstructors", "getDeclaringClass", "declaringClass", "setAccessible", "getRuntime", "exec",
			"exit", "halt");

	private static final TypeLocator noTypes = (typeName) -> {
		throw new SpelEvaluationException(SpelMessage.TYPE_NOT_FOUND, typeName);
	};

	private final Map<ExpressionKey, Expression> cache = new ConcurrentHashMap<>(64);

	private volatile @Nullable BeanResolver beanResolver;

	void setBeanFactory(BeanFactory beanFactory) {
		this.beanResolver = new BeanFactoryResolver(beanFactory);
	}

	/**
	 * Parses and checks the expression of the method.
	 * @throws IllegalArgumentException with the reason
	 */
	Expression parse(String expression, Method method, Class<?> targetClass) {
		if (expression.isBlank()) {
			throw new IllegalArgumentException("must not be empty");
		}
		if (expression.length() > MAX_LENGTH) {
			throw new IllegalArgumentException(
					"is " + expression.length() + " characters long, over the limit of " + MAX_LENGTH);
		}
		Expression parsed;
		try {
			parsed = getExpression(this.cache, new AnnotatedElementKey(method, targetClass), expression);
		}
		catch (ParseException ex) {
			throw new IllegalArgumentException("does not parse: " + ex.getMessage(), ex);
		}
		SpelNode ast = ((SpelExpression) parsed).getAST();
		check(ast, variables(method));
		checkRootProperties(ast, expression);
		KeyExpressionHints.checkMembers(ast, method, targetClass);
		return parsed;
	}

	/**
	 * A property read on the root object must be one of {@link LockExpressionRoot}'s: a
	 * bare word such as {@code report} is almost always meant as a constant.
	 */
	private static void checkRootProperties(SpelNode node, String expression) {
		if (node instanceof PropertyOrFieldReference property) {
			String name = property.getName();
			if (!ROOT_PROPERTIES.contains(name)) {
				throw new IllegalArgumentException("reads '" + name + "', which is neither a parameter ('#" + name
						+ "') nor a property of the root object " + ROOT_PROPERTIES + "; for a constant key, quote it: "
						+ "'" + name + "'");
			}
			return;
		}
		if (node instanceof Selection || node instanceof Projection) {
			return;
		}
		if (node instanceof CompoundExpression) {
			// only the first element is read from the root; later ones from its value,
			// and
			// a later projection or selection reads from each element
			checkRootProperties(node.getChild(0), expression);
			for (int i = 1; i < node.getChildCount(); i++) {
				if (node.getChild(i) instanceof Selection || node.getChild(i) instanceof Projection) {
					continue;
				}
				for (int j = 0; j < node.getChild(i).getChildCount(); j++) {
					checkRootProperties(node.getChild(i).getChild(j), expression);
				}
			}
			return;
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			checkRootProperties(node.getChild(i), expression);
		}
	}

	/** Evaluates a parsed expression for one call. */
	@Nullable Object evaluate(Expression expression, Method method, @Nullable Object[] args, @Nullable Object target,
			@Nullable Class<?> targetClass) {
		LockExpressionRoot root = new LockExpressionRoot(method, args, target, targetClass);
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, method, args,
				getParameterNameDiscoverer());
		context.setTypeLocator(noTypes);
		context.setConstructorResolvers(List.of());
		context.setMethodResolvers(List.of(DataBindingMethodResolver.forInstanceMethodInvocation()));
		context.setPropertyAccessors(List.of(DataBindingPropertyAccessor.forReadOnlyAccess()));
		BeanResolver beanResolver = this.beanResolver;
		if (beanResolver != null) {
			context.setBeanResolver(beanResolver);
		}
		return expression.getValue(context);
	}

	private Set<String> variables(Method method) {
		Set<String> variables = new TreeSet<>(List.of("root", "this"));
		for (int i = 0; i < method.getParameterCount(); i++) {
			variables.add("p" + i);
			variables.add("a" + i);
		}
		String[] names = getParameterNameDiscoverer().getParameterNames(method);
		if (names != null) {
			variables.addAll(List.of(names));
		}
		return variables;
	}

	private static void check(SpelNode node, Set<String> variables) {
		if (node instanceof TypeReference) {
			throw new IllegalArgumentException("type references such as '" + node.toStringAST() + "' are not allowed");
		}
		if (node instanceof ConstructorReference) {
			throw new IllegalArgumentException("constructors ('" + node.toStringAST() + "') are not allowed");
		}
		if (node instanceof Assign || node instanceof OpInc || node instanceof OpDec) {
			throw new IllegalArgumentException("assignments ('" + node.toStringAST() + "') are not allowed");
		}
		String member = member(node);
		if (member != null && REFLECTION.contains(member)) {
			throw new IllegalArgumentException("uses '" + member + "', which leads into reflection, class loading or "
					+ "the runtime; a key reads parameters, their properties and beans");
		}
		if (node instanceof FunctionReference) {
			throw new IllegalArgumentException("function calls ('" + node.toStringAST() + "') are not allowed");
		}
		if (node instanceof VariableReference) {
			String name = node.toStringAST().substring(1);
			if (!variables.contains(name)) {
				throw new IllegalArgumentException("refers to '#" + name + "', which is not a parameter; known: "
						+ String.join(", ", variables.stream().map((variable) -> "#" + variable).toList())
						+ " (parameter names need the -parameters compiler flag)");
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			check(node.getChild(i), variables);
		}
	}

	/** The method or property a node reads by name, also as {@code ['name']}. */
	private static @Nullable String member(SpelNode node) {
		if (node instanceof MethodReference method) {
			return method.getName();
		}
		if (node instanceof PropertyOrFieldReference property) {
			return property.getName();
		}
		if (node instanceof Indexer && node.getChildCount() == 1 && node.getChild(0) instanceof StringLiteral name) {
			return (String) name.getLiteralValue().getValue();
		}
		return null;
	}

}
