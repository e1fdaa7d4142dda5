--#include prelude.lua
local quota = condition("QuotaExceeded")
if ready.reason == "Terminating" then
  hs.status = "Progressing"
  hs.message = message(ready, "Terminating")
elseif ready.reason == "InvalidSpec" then
  hs.status = "Degraded"
  hs.message = message(ready, "InvalidSpec")
elseif quota ~= nil and quota.status == "True" then
  hs.status = "Degraded"
  hs.message = message(quota, "QuotaExceeded")
elseif ready.status == "True" then
  hs.status = "Healthy"
  hs.message = message(ready, "Ready")
else
  -- Pending: the namespace and RBAC are on their way.
  hs.status = "Progressing"
  hs.message = message(ready, tostring(ready.reason))
end
return hs
