# custom_toast.mk -- does the server have the custom TOAST hooks of
# patches/postgresql-18?  Included by the extension's Makefile and by the
# test module's, which must agree.  Needs PG_CONFIG; sets CUSTOM_TOAST to
# "yes" when the hooks are there, and then builds with -DJT_CUSTOM_TOAST.

SERVER_INCLUDEDIR := $(shell $(PG_CONFIG) --includedir-server)
CUSTOM_TOAST := $(shell grep -qs RegisterCustomToaster \
	"$(SERVER_INCLUDEDIR)/access/toast_custom.h" && \
	grep -qs RegisterBuiltinFunctionOverride \
	"$(SERVER_INCLUDEDIR)/fmgr.h" && echo yes)
ifeq ($(CUSTOM_TOAST),yes)
PG_CPPFLAGS += -DJT_CUSTOM_TOAST
endif
