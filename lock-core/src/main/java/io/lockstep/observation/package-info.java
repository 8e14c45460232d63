/**
 * Micrometer observations of locks: {@code lockstep.acquire} and {@code lockstep.held},
 * their documentation and a replaceable convention. Optional: used only when Micrometer
 * is present.
 */
@NullMarked
package io.lockstep.observation;

import org.jspecify.annotations.NullMarked;
