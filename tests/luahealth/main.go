// Command luahealth runs an Argo CD health script the way Argo CD does (gopher-lua, the base, package and table
// libraries only, the object as the global `obj`, one second at most) and prints the returned status and message
// as JSON. Usage: luahealth <health.lua> < object.json
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	lua "github.com/yuin/gopher-lua"
)

func decodeValue(L *lua.LState, value interface{}) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case []interface{}:
		arr := L.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(decodeValue(L, item))
		}
		return arr
	case map[string]interface{}:
		tbl := L.CreateTable(0, len(v))
		for key, item := range v {
			tbl.RawSetH(lua.LString(key), decodeValue(L, item))
		}
		return tbl
	}
	return lua.LNil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: luahealth <health.lua> < object.json")
		os.Exit(2)
	}
	script, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var obj map[string]interface{}
	if err := json.NewDecoder(os.Stdin).Decode(&obj); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			panic(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	L.SetContext(ctx)
	L.SetGlobal("obj", decodeValue(L, obj))
	if err := L.DoString(string(script)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		fmt.Fprintf(os.Stderr, "expect table output from Lua script, not %s\n", L.Get(-1).Type())
		os.Exit(1)
	}
	out := map[string]string{}
	for _, key := range []string{"status", "message"} {
		if v := ret.RawGetString(key); v != lua.LNil {
			out[key] = v.String()
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
