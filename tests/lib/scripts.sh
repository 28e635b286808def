# shellcheck shell=bash
# tracked_scripts EXT SHEBANG_ERE: the files git tracks that end in .EXT or
# whose first line is a #! line matching SHEBANG_ERE, one per line (links
# and deleted files left out). For the hygiene tests (tests/hygiene/).
# No set -e or pipefail here: a sourced file keeps the options of its caller.
tracked_scripts() {
	local ext=$1 shebang=$2 f first
	git ls-files -z | while IFS= read -r -d '' f; do
		if [ ! -f "$f" ] || [ -L "$f" ]; then
			continue
		fi
		case $f in
		*."$ext") echo "$f"; continue ;;
		esac
		first=
		IFS= read -r first <"$f" 2>/dev/null
		[[ $first =~ $shebang ]] && echo "$f"
	done
}
