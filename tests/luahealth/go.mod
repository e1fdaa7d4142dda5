module butler.test/luahealth

go 1.25.0

require github.com/yuin/gopher-lua v1.1.1
