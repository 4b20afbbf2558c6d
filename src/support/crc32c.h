/*-------------------------------------------------------------------------
 *
 * crc32c.h
 *	  CRC-32C of long inputs, the value core's COMP_CRC32C() gives.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/support/crc32c.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_CRC32C_H
#define JSONB_TOASTER_CRC32C_H

#include "port/pg_crc32c.h"

extern pg_crc32c jt_comp_crc32c(pg_crc32c crc, const void *data, size_t len);
/* exported for the test module */
extern PGDLLEXPORT pg_crc32c jt_comp_crc32c_three_way(pg_crc32c crc,
													 const void *data,
													 size_t len);

#endif							/* JSONB_TOASTER_CRC32C_H */
