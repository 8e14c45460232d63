package io.lockstep.test.starter;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The small application that the test starter's own tests test, as a user would. */
@SpringBootApplication
public class ShopApplication {

}
