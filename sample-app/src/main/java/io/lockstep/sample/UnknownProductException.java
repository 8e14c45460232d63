package io.lockstep.sample;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * No product has the SKU.
 */
@ResponseStatus(HttpStatus.NOT_FOUND)
class UnknownProductException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	UnknownProductException(String sku) {
		super("No product '" + sku + "'");
	}

}
