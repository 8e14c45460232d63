/**
 * Actuator support: the {@code locks} endpoint and the {@code lockstep} health indicator.
 */
package io.lockstep.actuate;
