package io.lockstep.interceptor;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.Elvis;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.Literal;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.OpPlus;
import org.springframework.expression.spel.ast.Projection;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.Selection;
import org.springframework.expression.spel.ast.StringLiteral;
import org.springframework.expression.spel.ast.Ternary;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Registers the reflection hints of one key expression: the getters, public fields and
 * methods it reads on the declared types of the method's parameters, on
 * {@link LockExpressionRoot} and on the beans it names, which SpEL finds and calls
 * reflectively at run time. Types are followed through chains
 * ({@code #order.customer.id}), indexes, projections and selections as far as the
 * declared (generic) types tell; a member that only a run-time subtype of a declared type
 * has is not found, and an expression reading one needs a hint of the application's own.
 */
final class KeyExpressionHints {

	private static final ResolvableType NONE = ResolvableType.NONE;

	private static final ResolvableType ROOT = ResolvableType.forClass(LockExpressionRoot.class);

	private static final ResolvableType STRING = ResolvableType.forClass(String.class);

	private final ReflectionHints hints;

	private final Map<String, ResolvableType> variables = new HashMap<>();

	private final Function<String, @Nullable Class<?>> beanTypes;

	/** Whether a member that a closed type cannot have fails the check. */
	private boolean strict;

	private KeyExpressionHints(ReflectionHints hints, Method method, Class<?> targetClass,
			Function<String, @Nullable Class<?>> beanTypes) {
		this.hints = hints;
		this.beanTypes = beanTypes;
		String[] names = new DefaultParameterNameDiscoverer().getParameterNames(method);
		for (int i = 0; i < method.getParameterCount(); i++) {
			ResolvableType type = ResolvableType.forMethodParameter(method, i, targetClass);
			this.variables.put("p" + i, type);
			this.variables.put("a" + i, type);
			// a suspend fun's continuation has no name: fewer names than parameters
			if (names != null && i < names.length) {
				this.variables.put(names[i], type);
			}
		}
	}

	/**
	 * Registers the hints of the parsed expression (its AST) of the method.
	 * @param beanTypes the type of a bean by name ({@code @name}), or {@code null} when
	 * it is not known
	 */
	static void register(ReflectionHints hints, SpelNode ast, Method method, Class<?> targetClass,
			Function<String, @Nullable Class<?>> beanTypes) {
		new KeyExpressionHints(hints, method, targetClass, beanTypes).walk(ast, ROOT, ROOT);
	}

	/**
	 * Checks that every member the expression reads on a type that fixes its members (a
	 * final class such as {@code String} or a record, an enum, a primitive or its box)
	 * exists there, following the declared types as {@link #register} does; members of
	 * other types are left to run time, where a subtype may have them.
	 * @throws IllegalArgumentException naming the member and the type
	 */
	static void checkMembers(SpelNode ast, Method method, Class<?> targetClass) {
		KeyExpressionHints check = new KeyExpressionHints(new RuntimeHints().reflection(), method, targetClass,
				(name) -> null);
		check.strict = true;
		try {
			check.walk(ast, ROOT, ROOT);
		}
		catch (MissingMember ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			// the check is a help: a type it cannot follow is left to run time, never a
			// failed start
		}
	}

	/**
	 * Registers what the node reads and answers the type of its value ({@code NONE} when
	 * unknown).
	 * @param active the type of the object the node reads from (SpEL's active context)
	 * @param scope the type of the scope's root: the root object, or the element in a
	 * projection or selection; method arguments and indexes are read from it
	 */
	private ResolvableType walk(SpelNode node, ResolvableType active, ResolvableType scope) {
		if (node instanceof CompoundExpression) {
			ResolvableType current = active;
			for (int i = 0; i < node.getChildCount(); i++) {
				current = walk(node.getChild(i), current, scope);
			}
			return current;
		}
		if (node instanceof VariableReference) {
			String name = node.toStringAST().substring(1);
			return switch (name) {
				case "root" -> ROOT;
				case "this" -> active;
				default -> this.variables.getOrDefault(name, NONE);
			};
		}
		if (node instanceof PropertyOrFieldReference property) {
			return property(active, property.getName());
		}
		if (node instanceof MethodReference reference) {
			for (int i = 0; i < node.getChildCount(); i++) {
				walk(node.getChild(i), scope, scope);
			}
			return method(active, reference.getName(), node.getChildCount());
		}
		if (node instanceof Indexer) {
			return index(node.getChild(0), active, scope);
		}
		if (node instanceof Projection) {
			ResolvableType element = element(active);
			Class<?> projected = walk(node.getChild(0), element, element).resolve();
			return (projected != null)
					? ResolvableType.forClassWithGenerics(List.class, ClassUtils.resolvePrimitiveIfNecessary(projected))
					: ResolvableType.forClass(List.class);
		}
		if (node instanceof Selection) {
			ResolvableType element = element(active);
			walk(node.getChild(0), element, element);
			String ast = node.toStringAST();
			return (ast.startsWith("^[") || ast.startsWith("$[")) ? element : active;
		}
		if (node instanceof BeanReference bean) {
			Class<?> type = this.beanTypes.apply(bean.getName());
			return (type != null) ? ResolvableType.forClass(ClassUtils.getUserClass(type)) : NONE;
		}
		if (node instanceof Literal literal) {
			TypedValue value = literal.getLiteralValue();
			return (value.getValue() != null) ? ResolvableType.forClass(value.getValue().getClass()) : NONE;
		}
		return operator(node, active, scope);
	}

	/** Operators, ternaries, inline lists and maps: children read where the node does. */
	private ResolvableType operator(SpelNode node, ResolvableType active, ResolvableType scope) {
		ResolvableType[] children = new ResolvableType[node.getChildCount()];
		for (int i = 0; i < children.length; i++) {
			children[i] = walk(node.getChild(i), active, scope);
		}
		if (node instanceof OpPlus && Arrays.stream(children).anyMatch((child) -> child.resolve() == String.class)) {
			return STRING;
		}
		if (node instanceof Elvis && children.length == 2 && same(children[0], children[1])) {
			return children[0];
		}
		if (node instanceof Ternary && children.length == 3 && same(children[1], children[2])) {
			return children[1];
		}
		return NONE;
	}

	private ResolvableType index(SpelNode index, ResolvableType active, ResolvableType scope) {
		Class<?> type = active.resolve();
		if (type != null && !type.isArray() && !Map.class.isAssignableFrom(type)
				&& !Collection.class.isAssignableFrom(type) && type != String.class
				&& index instanceof StringLiteral literal
				&& literal.getLiteralValue().getValue() instanceof String name) {
			// ['name'] on an object reads the property 'name'
			return property(active, name);
		}
		if (!(index instanceof PropertyOrFieldReference && type != null && Map.class.isAssignableFrom(type))) {
			// a map's [name] is the key 'name', not a property read
			walk(index, scope, scope);
		}
		if (type == null) {
			return NONE;
		}
		if (type.isArray()) {
			return active.getComponentType();
		}
		if (Map.class.isAssignableFrom(type)) {
			return active.asMap().getGeneric(1);
		}
		if (Collection.class.isAssignableFrom(type)) {
			return active.asCollection().getGeneric(0);
		}
		return (type == String.class) ? STRING : NONE;
	}

	/** The element type a projection or selection iterates over. */
	private static ResolvableType element(ResolvableType type) {
		Class<?> raw = type.resolve();
		if (raw == null) {
			return NONE;
		}
		if (raw.isArray()) {
			return type.getComponentType();
		}
		if (Map.class.isAssignableFrom(raw)) {
			ResolvableType map = type.asMap();
			return ResolvableType.forClassWithGenerics(Map.Entry.class, map.getGeneric(0), map.getGeneric(1));
		}
		if (Iterable.class.isAssignableFrom(raw)) {
			return type.as(Iterable.class).getGeneric(0);
		}
		return NONE;
	}

	/** What SpEL's reflective property accessor reads: a getter, else a public field. */
	private ResolvableType property(ResolvableType owner, String name) {
		Class<?> type = boxed(owner.resolve());
		if (type == null || name.isEmpty()) {
			return NONE;
		}
		if (type.isArray() && name.equals("length")) {
			return ResolvableType.forClass(int.class);
		}
		Method getter = getter(type, name);
		if (getter != null) {
			invoke(getter, type);
			return ResolvableType.forMethodParameter(new MethodParameter(getter, -1), owner);
		}
		for (Field field : type.getFields()) {
			if (field.getName().equals(name) && !Modifier.isStatic(field.getModifiers())) {
				this.hints.registerField(field);
				return ResolvableType.forField(field, owner);
			}
		}
		if (this.strict && closed(type)) {
			throw new MissingMember(
					"reads '" + name + "' on " + type.getName() + ", which has no such property (no public get"
							+ StringUtils.capitalize(name) + "(), " + "is" + StringUtils.capitalize(name) + "() or "
							+ name + "() method and no public field '" + name + "'); every call would fail");
		}
		return NONE;
	}

	/**
	 * Whether the type fixes its members: no subtype can add one (final classes, records,
	 * enums, and the boxes of primitives). Arrays and maps are read otherwise.
	 */
	private static boolean closed(Class<?> type) {
		return !type.isArray() && !Map.class.isAssignableFrom(type)
				&& (Modifier.isFinal(type.getModifiers()) || type.isEnum());
	}

	private static @Nullable Class<?> boxed(@Nullable Class<?> type) {
		return (type != null) ? ClassUtils.resolvePrimitiveIfNecessary(type) : null;
	}

	/** {@code getName()}, {@code isName()} (boolean) or {@code name()} (a record's). */
	private static @Nullable Method getter(Class<?> type, String name) {
		Set<String> suffixes = new LinkedHashSet<>();
		suffixes.add(StringUtils.capitalize(name));
		if (name.length() > 1 && Character.isUpperCase(name.charAt(1))) {
			suffixes.add(name);
		}
		Method[] methods = type.getMethods();
		for (String prefix : List.of("get", "is", "")) {
			for (String suffix : suffixes) {
				String candidate = prefix.isEmpty() ? name : prefix + suffix;
				for (Method method : methods) {
					if (method.getName().equals(candidate) && method.getParameterCount() == 0
							&& !Modifier.isStatic(method.getModifiers()) && method.getReturnType() != void.class
							&& (!prefix.equals("is") || ClassUtils
								.resolvePrimitiveIfNecessary(method.getReturnType()) == Boolean.class)) {
						return method;
					}
				}
			}
		}
		return null;
	}

	/** Registers every public method of the name that the arguments may fit. */
	private ResolvableType method(ResolvableType owner, String name, int arguments) {
		Class<?> type = boxed(owner.resolve());
		if (type == null) {
			return NONE;
		}
		Method found = null;
		int count = 0;
		for (Method method : type.getMethods()) {
			if (method.getName().equals(name) && !Modifier.isStatic(method.getModifiers())
					&& (method.getParameterCount() == arguments
							|| (method.isVarArgs() && arguments >= method.getParameterCount() - 1))) {
				invoke(method, type);
				found = method;
				count++;
			}
		}
		if (count == 0 && this.strict && closed(type)) {
			throw new MissingMember("calls '" + name + "' with " + arguments + " argument(s) on " + type.getName()
					+ ", which has no such public method; every call would fail");
		}
		return (count == 1 && found != null) ? ResolvableType.forMethodParameter(new MethodParameter(found, -1), owner)
				: NONE;
	}

	/**
	 * The method as found and as SpEL may call it: through a public class or interface
	 * declaring it, when the type itself is not public.
	 */
	private void invoke(Method method, Class<?> type) {
		this.hints.registerMethod(method, ExecutableMode.INVOKE);
		Method accessible = ClassUtils.getPubliclyAccessibleMethodIfPossible(method, type);
		if (!accessible.equals(method)) {
			this.hints.registerMethod(accessible, ExecutableMode.INVOKE);
		}
		Method declared = ClassUtils.getInterfaceMethodIfPossible(method, type);
		if (!declared.equals(method) && !declared.equals(accessible)) {
			this.hints.registerMethod(declared, ExecutableMode.INVOKE);
		}
	}

	private static boolean same(ResolvableType first, ResolvableType second) {
		return first.resolve() != null && first.resolve() == second.resolve();
	}

	/** A member that the type of a parameter cannot have. */
	private static final class MissingMember extends IllegalArgumentException {

		private static final long serialVersionUID = 1L;

		MissingMember(String message) {
			super(message);
		}

	}

}
