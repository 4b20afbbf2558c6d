/*-------------------------------------------------------------------------
 *
 * writing_statement.h
 *	  Whether the running transaction may still write rows.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/support/writing_statement.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_WRITING_STATEMENT_H
#define JSONB_TOASTER_WRITING_STATEMENT_H

extern void jt_writing_statement_init(void);
extern bool jt_transaction_may_still_write(void);

#endif							/* JSONB_TOASTER_WRITING_STATEMENT_H */
