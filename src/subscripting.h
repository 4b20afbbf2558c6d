/*-------------------------------------------------------------------------
 *
 * subscripting.h
 *	  jsonb subscripting that reads and changes only the parts it needs.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/subscripting.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_SUBSCRIPTING_H
#define JSONB_TOASTER_SUBSCRIPTING_H

#include "nodes/subscripting.h"

/* what jsonb_subscript_handler returns in place of the builtin's routines */
extern const SubscriptRoutines *jt_subscript_routines(void);

#endif							/* JSONB_TOASTER_SUBSCRIPTING_H */
