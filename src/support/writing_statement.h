/*-------------------------------------------------------------------------
 *
 * writing_statement.h
 *	  Whether a statement that may write rows is running in this backend.
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
extern bool jt_writing_statement_running(void);

#endif							/* JSONB_TOASTER_WRITING_STATEMENT_H */
