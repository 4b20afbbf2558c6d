#!/usr/bin/env bash
# tools/dev-instance.sh -- a long-lived instance for interactive work.
#
#   tools/dev-instance.sh start [assert|release]   # build, install, start
#   tools/dev-instance.sh stop [assert|release]
#
# Builds the server flavour (cached) and the current extension, and starts
# an instance with the library preloaded, its data and socket under
# ~/.cache/jsonb_toaster/dev-<flavour>.  Prints the environment to use it:
#   eval "$(tools/dev-instance.sh start)"; psql

. "$(dirname "$0")/lib.sh"

action=${1:-start}
flavour=${2:-assert}
drop_root "$0" "$@"

prefix=$("$JT_TOP/tools/build-server.sh" "$flavour")
export PATH="$prefix/bin:$PATH"
dir=$JT_CACHE/dev-$flavour
port=$( [ "$flavour" = assert ] && echo 5418 || echo 5419 )

case $action in
	start)
		stop_instance "$dir/data"
		# a clean build: PGXS does not track header dependencies
		rm -rf "$dir/build"
		build_extension "$prefix/bin/pg_config" "$dir/build"
		if [ ! -d "$dir/data" ]; then
			start_instance "$dir/data" "$dir" "$port" "shared_buffers = 1GB" \
				"max_wal_size = 10GB"
		else
			pg_ctl -D "$dir/data" -l "$dir/data.log" -w start >/dev/null
		fi
		echo "export PATH='$prefix/bin':\$PATH PGHOST='$dir' PGPORT=$port PGUSER=postgres PGDATABASE=postgres"
		;;
	stop)
		stop_instance "$dir/data"
		;;
	*)
		die "usage: $0 start|stop [assert|release]"
		;;
esac
