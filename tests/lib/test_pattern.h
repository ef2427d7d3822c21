/* The tests' one byte pattern: the byte at stream offset i. Not periodic over any
 * segment or buffer size a test uses, so a byte delivered at the wrong offset (a resend
 * placed wrong, a lost or doubled segment) shows as a mismatch. */
#ifndef MYRIO_TEST_PATTERN_H
#define MYRIO_TEST_PATTERN_H

#include <stdint.h>

uint8_t test_pattern(uint64_t i);

#endif
