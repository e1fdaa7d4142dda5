--#include prelude.lua
local phase = obj.status.phase
local network = condition("NetworkReady")
if phase == "Ready" then
  hs.status = "Healthy"
  hs.message = message(ready, "Ready")
elseif phase == "Failed" or ready.reason == "InvalidSpec" or ready.reason == "AccessDenied" then
  hs.status = "Degraded"
  hs.message = message(ready, tostring(ready.reason))
elseif phase == "Deleting" or ready.reason == "MissingInput" then
  -- Finalizing, or waiting for its Team or ProviderConfig, which a sync may still be creating.
  hs.status = "Progressing"
  hs.message = message(ready, tostring(phase))
elseif network ~= nil and network.status == "False" and network.reason == "PoolExhausted" then
  -- Waiting for addresses that no pool can give: it will not progress by itself.
  hs.status = "Degraded"
  hs.message = message(network, "PoolExhausted")
else
  -- Pending: waiting for addresses.
  hs.status = "Progressing"
  hs.message = message(network, message(ready, tostring(phase)))
end
return hs
