/*-------------------------------------------------------------------------
 *
 * patch_pointer.h
 *	  What jt_adopt() and jt_delete() learn from the pointers
 *	  patch_pointer.c made (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/patch_pointer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PATCH_POINTER_H
#define JSONB_TOASTER_PATCH_POINTER_H

extern bool jt_names_same_parts(const struct varlena *newptr,
								const struct varlena *oldptr);

#endif							/* JSONB_TOASTER_PATCH_POINTER_H */
