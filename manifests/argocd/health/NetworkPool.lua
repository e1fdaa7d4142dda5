--#include prelude.lua
-- A full pool is still Healthy: capacity is reported, never a failure of the pool itself.
if ready.status == "True" then
  hs.status = "Healthy"
  hs.message = message(ready, "Ready")
  for _, t in ipairs({ "CapacityExhausted", "CapacityCritical", "CapacityWarning" }) do
    local c = condition(t)
    if c ~= nil and c.status == "True" then
      hs.message = hs.message .. "; " .. t .. ": " .. message(c, "")
      break
    end
  end
elseif ready.reason == "DeletionBlocked" then
  hs.status = "Progressing"
  hs.message = message(ready, "Waiting for allocations to be released")
else
  hs.status = "Degraded"
  hs.message = message(ready, tostring(ready.reason))
end
return hs
