/**
 * Actuator support: the {@code locks} endpoint and the {@code lockstep} health indicator.
 */
@NullMarked
package io.lockstep.actuate;

import org.jspecify.annotations.NullMarked;
